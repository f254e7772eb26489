package toolcallmarkup

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Attr is one tool-specific attribute of a tag, such as query or count.
type Attr struct{ Key, Value string }

// ToolCall is the content of one tag.
type ToolCall struct {
	ID       string // toolCallId
	Type     string // tool name
	Status   Status
	Error    string
	ParentID string // parentToolCallId; "" at top level
	Attrs    []Attr // tool-specific attributes (query, count, url, …), in order
}

// Update describes a change to a tag.
type Update struct {
	Status Status // "" keeps the current status
	Error  string // with Status "success", a stale error is removed
	Extra  []Attr // set or replace tool-specific attributes
}

const (
	tagName  = "ToolCall"
	openLit  = "<ToolCall"
	closeTag = "</ToolCall>"

	maxIDBytes = 500
)

// maxValueRunes returns the length limit of an attribute's value, in
// characters (Unicode code points), as Perplexica counts them.
func maxValueRunes(key string) int {
	switch key {
	case "query":
		return 200
	case "url", "error":
		return 300
	}
	return 500
}

// reserved reports whether key is written by the package itself and so
// cannot be set as a tool-specific attribute.
func reserved(key string) bool {
	switch key {
	case "type", "status", "toolCallId", "parentToolCallId", "error":
		return true
	}
	return false
}

// ValidKey reports whether key is a valid attribute name:
// [A-Za-z_][A-Za-z0-9_.:-]*.
func ValidKey(key string) bool {
	if key == "" {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '.' || c == ':' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// Truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// Shorten cuts s to at most n bytes on a rune boundary, ending it with "…"
// when it was cut. Truncate, Shorten, ShortenRunes and OneLine are the
// cutting of text every package shares (the display limits are in package
// statustext).
func Shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ell = "…"
	return Truncate(s, max(n-len(ell), 0)) + ell
}

// ShortenRunes cuts s to at most n runes, ending it with "…" when it was
// cut.
func ShortenRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return truncateRunes(s, max(n-1, 0)) + "…"
}

// OneLine makes s one line of at most n bytes: its runs of white space
// become one space, and it is shortened.
func OneLine(s string, n int) string {
	return Shorten(strings.Join(strings.Fields(s), " "), n)
}

// truncateRunes cuts s to at most n characters (runes).
func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s // n bytes hold at least n runes
	}
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// sanitize replaces invalid UTF-8 (byte by byte) and NUL with U+FFFD.
func sanitize(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if s[i] == 0 || s[i] >= utf8.RuneSelf {
			clean = false
			break
		}
	}
	if clean || (utf8.ValidString(s) && strings.IndexByte(s, 0) < 0) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == 0 || r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// cleanValue sanitises one attribute value and cuts it to its limit.
func cleanValue(key, v string) string {
	return truncateRunes(sanitize(v), maxValueRunes(key))
}

// Normalize returns tc as its tag will store it: invalid UTF-8 and NUL
// replaced by U+FFFD, values cut to their limits, attributes with an invalid
// or reserved key dropped, and a repeated key kept once (at its first
// position, with its last value). Parse(Markup(tc)) equals Normalize(tc) for
// any tc that Validate accepts.
func Normalize(tc ToolCall) ToolCall {
	out := ToolCall{
		ID:       sanitize(tc.ID),
		Type:     cleanValue("type", tc.Type),
		Status:   tc.Status,
		Error:    cleanValue("error", tc.Error),
		ParentID: sanitize(tc.ParentID),
	}
	out.Attrs = mergeAttrs(nil, tc.Attrs)
	return out
}

// mergeAttrs sets or replaces attrs in dst, keeping dst's order and adding
// new keys at the end. Invalid and reserved keys are skipped. dst is not
// modified; the result is a new slice.
func mergeAttrs(dst, attrs []Attr) []Attr {
	out := make([]Attr, len(dst), len(dst)+len(attrs))
	copy(out, dst)
next:
	for _, a := range attrs {
		if !ValidKey(a.Key) || reserved(a.Key) {
			continue
		}
		v := cleanValue(a.Key, a.Value)
		for i := range out {
			if out[i].Key == a.Key {
				out[i].Value = v
				continue next
			}
		}
		out = append(out, Attr{Key: a.Key, Value: v})
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// validID reports whether id can name a tool call: non-empty, at most 500
// bytes, valid UTF-8 without control characters.
func validID(id string) bool {
	if id == "" || len(id) > maxIDBytes || !utf8.ValidString(id) {
		return false
	}
	for _, r := range id {
		if isControl(r) {
			return false
		}
	}
	return true
}

// Validate reports why tc cannot be written as a tag, or nil. It checks the
// id and parent id, that a type is given, that the status is valid and that
// every attribute key is valid and not reserved.
func Validate(tc ToolCall) error {
	if !validID(tc.ID) {
		return fmt.Errorf("%w: toolCallId %q must be 1 to %d bytes of printable UTF-8", ErrInvalid, tc.ID, maxIDBytes)
	}
	if tc.ParentID != "" && !validID(tc.ParentID) {
		return fmt.Errorf("%w: parentToolCallId %q must be 1 to %d bytes of printable UTF-8", ErrInvalid, tc.ParentID, maxIDBytes)
	}
	if tc.ParentID == tc.ID {
		return fmt.Errorf("%w: tool call %q cannot be its own parent", ErrInvalid, tc.ID)
	}
	if strings.TrimSpace(tc.Type) == "" {
		return fmt.Errorf("%w: tool call %q has no type", ErrInvalid, tc.ID)
	}
	if !tc.Status.Valid() {
		return fmt.Errorf("%w: unknown status %q", ErrInvalid, tc.Status)
	}
	return validateAttrs(tc.Attrs)
}

func validateAttrs(attrs []Attr) error {
	for _, a := range attrs {
		if !ValidKey(a.Key) {
			return fmt.Errorf("%w: attribute name %q", ErrInvalid, a.Key)
		}
		if reserved(a.Key) {
			return fmt.Errorf("%w: attribute %q cannot be set as a tool-specific attribute", ErrInvalid, a.Key)
		}
	}
	return nil
}

// OpenTag returns the canonical opening tag of tc. Values are normalised as
// by Normalize; attributes with an invalid or reserved key are left out.
func OpenTag(tc ToolCall) string {
	var b strings.Builder
	b.Grow(64 + len(tc.ID) + len(tc.Type) + len(tc.ParentID) + len(tc.Error) + 16*len(tc.Attrs))
	writeOpen(&b, tc)
	return b.String()
}

// Markup returns the whole element of tc: OpenTag(tc) + "</ToolCall>".
func Markup(tc ToolCall) string {
	return OpenTag(tc) + closeTag
}

func writeOpen(b *strings.Builder, tc ToolCall) {
	b.WriteString(openLit)
	writeAttr(b, "type", cleanValue("type", tc.Type))
	writeAttr(b, "status", string(tc.Status))
	writeAttr(b, "toolCallId", sanitize(tc.ID))
	if tc.ParentID != "" {
		writeAttr(b, "parentToolCallId", sanitize(tc.ParentID))
	}
	for i, a := range tc.Attrs {
		if !ValidKey(a.Key) || reserved(a.Key) || seenBefore(tc.Attrs[:i], a.Key) {
			continue
		}
		writeAttr(b, a.Key, cleanValue(a.Key, lastValue(tc.Attrs[i:], a.Key)))
	}
	if tc.Error != "" {
		writeAttr(b, "error", cleanValue("error", tc.Error))
	}
	b.WriteByte('>')
}

func seenBefore(attrs []Attr, key string) bool {
	for _, a := range attrs {
		if a.Key == key {
			return true
		}
	}
	return false
}

func lastValue(attrs []Attr, key string) string {
	v := ""
	for _, a := range attrs {
		if a.Key == key {
			v = a.Value
		}
	}
	return v
}

func writeAttr(b *strings.Builder, key, value string) {
	b.WriteByte(' ')
	b.WriteString(key)
	b.WriteString(`="`)
	escapeAttr(b, value)
	b.WriteByte('"')
}

// rawSpace reports whether c is a tab or a line break, which a reader
// accepts written raw inside a value (Perplexica writes error text so) and a
// writer always writes as a character reference.
func rawSpace(c byte) bool { return c == '\t' || c == '\n' || c == '\r' }

// OneLineTags returns content with every tab and line break written raw
// inside a genuine opening tag replaced by its character reference, so that
// each opening tag stands on one line. Parse reads the same calls from the
// result; nothing outside the opening tags changes, and content whose tags
// are already on one line, as this package writes them, is returned as it
// is. A renderer that reads its input line by line calls it first.
func OneLineTags(content string) string {
	if strings.IndexAny(content, "\t\n\r") < 0 {
		return content
	}
	var b strings.Builder
	last := 0
	for _, sp := range Scan(content) {
		open := content[sp.Start:sp.OpenEnd]
		if strings.IndexAny(open, "\t\n\r") < 0 {
			continue
		}
		b.WriteString(content[last:sp.Start])
		for i := 0; i < len(open); i++ {
			if c := open[i]; rawSpace(c) {
				b.WriteString("&#" + strconv.Itoa(int(c)) + ";")
			} else {
				b.WriteByte(c)
			}
		}
		last = sp.OpenEnd
	}
	if last == 0 {
		return content
	}
	b.WriteString(content[last:])
	return b.String()
}

// isControl reports whether r must be written as a character reference
// inside a value: C0 and C1 controls, DEL and the Unicode line separators.
func isControl(r rune) bool {
	return r < 0x20 || r >= 0x7f && r <= 0x9f || r == 0x2028 || r == 0x2029
}

// escapeAttr writes v (valid UTF-8) escaped for a double-quoted value.
func escapeAttr(b *strings.Builder, v string) {
	last := 0
	for i := 0; i < len(v); {
		c := v[i]
		var rep string
		n := 1
		switch {
		case c == '&':
			rep = "&amp;"
		case c == '<':
			rep = "&lt;"
		case c == '>':
			rep = "&gt;"
		case c == '"':
			rep = "&quot;"
		case c == '\'':
			rep = "&#39;"
		case c == '\\':
			// A "\" before the closing quote reads as an escaped quote to
			// some renderers (markdown-to-jsx), so it is never written raw.
			rep = "&#92;"
		case c < 0x20 || c == 0x7f:
			rep = "&#" + strconv.Itoa(int(c)) + ";"
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(v[i:])
			n = size
			if !isControl(r) {
				i += n
				continue
			}
			rep = "&#" + strconv.Itoa(int(r)) + ";"
		default:
			i++
			continue
		}
		b.WriteString(v[last:i])
		b.WriteString(rep)
		i += n
		last = i
	}
	b.WriteString(v[last:])
}

// unescapeAttr reverses escapeAttr: it decodes &amp; &lt; &gt; &quot; &#N;
// and &#xN; and leaves anything else as written.
func unescapeAttr(v string) string {
	i := strings.IndexByte(v, '&')
	if i < 0 {
		return v
	}
	var b strings.Builder
	b.Grow(len(v))
	for i >= 0 {
		b.WriteString(v[:i])
		v = v[i:]
		n, r := decodeRef(v)
		if n == 0 {
			b.WriteByte('&')
			v = v[1:]
		} else {
			b.WriteString(r)
			v = v[n:]
		}
		i = strings.IndexByte(v, '&')
	}
	b.WriteString(v)
	return b.String()
}

// decodeRef decodes one character reference at the start of s and returns
// its length and text, or 0 when s does not start with one.
func decodeRef(s string) (int, string) {
	for _, e := range [...]struct{ ref, text string }{
		{"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", `"`}, {"&apos;", "'"},
	} {
		if strings.HasPrefix(s, e.ref) {
			return len(e.ref), e.text
		}
	}
	if len(s) < 4 || s[1] != '#' {
		return 0, ""
	}
	base, start := 10, 2
	if s[2] == 'x' || s[2] == 'X' {
		base, start = 16, 3
	}
	end := start
	for end < len(s) && end-start < 8 && isDigit(s[end], base) {
		end++
	}
	if end == start || end >= len(s) || s[end] != ';' {
		return 0, ""
	}
	n, err := strconv.ParseUint(s[start:end], base, 32)
	if err != nil || n == 0 || n > utf8.MaxRune || n >= 0xd800 && n <= 0xdfff {
		return end + 1, string(utf8.RuneError)
	}
	return end + 1, string(rune(n))
}

func isDigit(c byte, base int) bool {
	if c >= '0' && c <= '9' {
		return true
	}
	return base == 16 && (c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F')
}
