package toolcallmarkup

import (
	"fmt"
	"strings"
)

// Span locates one genuine element in a content string.
//
// content[Start:OpenEnd] is the opening tag, content[OpenEnd:CloseStart] the
// body (the elements of nested calls) and content[CloseStart:End] the closing
// tag. An element left unclosed at the end of the content has
// CloseStart == End == len(content).
type Span struct {
	Start, OpenEnd, CloseStart, End int
	Call                            ToolCall
	Parent                          int // index of the enclosing element in the slice, -1 at top level
}

// Scan returns every genuine element of content in document order.
//
// A genuine opening tag is the exact text "<ToolCall" followed by
// space-separated key="value" attributes (with type, a valid status and a
// toolCallId among them) and ">"; a value may hold a raw tab or line break,
// as Perplexica writes them (see OneLineTags). Anything else, such as
// neutralised model text, a line break between attributes, a raw "<" or
// another control character in a value, or a tag of another letter case,
// is text. A "</ToolCall>" with no open element is text too.
func Scan(content string) []Span {
	var spans []Span
	var stack []int
	pos := 0
	for pos < len(content) {
		k := strings.Index(content[pos:], tagName)
		if k < 0 {
			break
		}
		k += pos
		switch {
		case k >= 1 && content[k-1] == '<':
			if tc, end, ok := parseOpen(content, k-1); ok {
				parent := -1
				if len(stack) > 0 {
					parent = stack[len(stack)-1]
					if tc.ParentID == "" {
						tc.ParentID = spans[parent].Call.ID
					}
				}
				spans = append(spans, Span{Start: k - 1, OpenEnd: end, CloseStart: len(content), End: len(content), Call: tc, Parent: parent})
				stack = append(stack, len(spans)-1)
				pos = end
				continue
			}
		case k >= 2 && content[k-2] == '<' && content[k-1] == '/' && strings.HasPrefix(content[k+len(tagName):], ">"):
			if len(stack) > 0 {
				top := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				spans[top].CloseStart = k - 2
				spans[top].End = k + len(tagName) + 1
				pos = spans[top].End
				continue
			}
		}
		pos = k + len(tagName)
	}
	return spans
}

// Parse returns every genuine tag of content, in document order. A nested
// tag's ParentID is its parentToolCallId attribute or, failing that, the id
// of the element around it.
func Parse(content string) []ToolCall {
	spans := Scan(content)
	calls := make([]ToolCall, len(spans))
	for i, s := range spans {
		calls[i] = s.Call
	}
	return calls
}

// ParseOpenTag parses markup that is exactly one genuine opening tag, such
// as the Markup of a tool_call_* event, and returns its call. It fails with
// ErrInvalid for anything else. It costs one pass over the tag, whatever
// the size of the message the tag belongs to.
func ParseOpenTag(markup string) (ToolCall, error) {
	tc, end, ok := parseOpen(markup, 0)
	if !ok || end != len(markup) {
		return ToolCall{}, fmt.Errorf("%w: not one opening ToolCall tag", ErrInvalid)
	}
	return tc, nil
}

// HasTagPrefix reports whether s starts with a genuine opening tag.
func HasTagPrefix(s string) bool {
	_, _, ok := parseOpen(s, 0)
	return ok
}

// parseOpen parses the opening tag that starts at s[start] ("<ToolCall").
// It returns the call, the offset just past ">" and whether the tag is
// genuine.
func parseOpen(s string, start int) (ToolCall, int, bool) {
	var tc ToolCall
	if !strings.HasPrefix(s[start:], openLit) {
		return tc, 0, false
	}
	i := start + len(openLit)
	var haveType, haveStatus, haveID bool
	for {
		if i >= len(s) {
			return tc, 0, false
		}
		if s[i] == '>' {
			break
		}
		if s[i] != ' ' {
			return tc, 0, false
		}
		for i < len(s) && s[i] == ' ' {
			i++
		}
		// key
		ks := i
		for i < len(s) && s[i] != '=' && s[i] != ' ' && s[i] != '>' {
			i++
		}
		key := s[ks:i]
		if !ValidKey(key) || !strings.HasPrefix(s[i:], `="`) {
			return tc, 0, false
		}
		i += 2
		vs := i
		for i < len(s) && s[i] != '"' {
			if c := s[i]; c == '<' || c == '>' || c < 0x20 && !rawSpace(c) || c == 0x7f {
				return tc, 0, false
			}
			i++
		}
		if i >= len(s) {
			return tc, 0, false
		}
		raw := s[vs:i]
		i++ // closing quote
		val := unescapeAttr(raw)
		switch key {
		case "type":
			tc.Type, haveType = val, true
		case "status":
			tc.Status, haveStatus = Status(val), true
		case "toolCallId":
			tc.ID, haveID = val, true
		case "parentToolCallId":
			tc.ParentID = val
		case "error":
			tc.Error = val
		default:
			set := false
			for j := range tc.Attrs {
				if tc.Attrs[j].Key == key {
					tc.Attrs[j].Value, set = val, true
				}
			}
			if !set {
				tc.Attrs = append(tc.Attrs, Attr{Key: key, Value: val})
			}
		}
	}
	if !haveType || !haveStatus || !haveID || tc.ID == "" || !tc.Status.Valid() {
		return tc, 0, false
	}
	return tc, i + 1, true
}

// findOpen returns the span of the first genuine opening tag whose
// toolCallId is exactly id. It looks for the id as a Document writes it
// first, without parsing the rest of the content, and falls back to reading
// every tag, so that it finds whatever Parse finds, however the value is
// escaped.
func findOpen(content, id string) (start, end int, tc ToolCall, ok bool) {
	if start, end, tc, ok = findCanonical(content, id); ok {
		return start, end, tc, ok
	}
	for _, s := range Scan(content) {
		if s.Call.ID == id {
			tc, _, _ = parseOpen(content, s.Start)
			return s.Start, s.OpenEnd, tc, true
		}
	}
	return 0, 0, tc, false
}

// findCanonical is findOpen for a toolCallId written in canonical form.
func findCanonical(content, id string) (start, end int, tc ToolCall, ok bool) {
	var b strings.Builder
	b.WriteString(` toolCallId="`)
	escapeAttr(&b, id)
	b.WriteByte('"')
	needle := b.String()
	from := 0
	for {
		k := strings.Index(content[from:], needle)
		if k < 0 {
			return 0, 0, tc, false
		}
		k += from
		// A value holds no raw '<', so the nearest '<' before the attribute
		// starts its tag if the tag is genuine.
		if lt := strings.LastIndexByte(content[:k], '<'); lt >= 0 {
			if c, e, good := parseOpen(content, lt); good && e > k && c.ID == id {
				return lt, e, c, true
			}
		}
		from = k + len(needle)
	}
}
