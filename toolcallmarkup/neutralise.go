package toolcallmarkup

import (
	"strings"
	"unicode/utf8"
)

// match results of the look-ahead after '<' or '&'.
const (
	noMatch = iota
	partialMatch
	fullMatch
)

// matchName checks whether s starts with "/"? + "toolcall" in any letter
// case: fullMatch, partialMatch when s ends before that could be decided,
// noMatch otherwise.
func matchName(s string) int {
	j := 0
	if j < len(s) && s[j] == '/' {
		j++
	}
	const name = "toolcall"
	for k := 0; k < len(name); k++ {
		if j >= len(s) {
			return partialMatch
		}
		c := s[j]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[k] {
			return noMatch
		}
		j++
	}
	return fullMatch
}

// matchRef checks whether s (the text after a '&') is ("amp;")* "lt;"
// followed by a name that matchName accepts.
func matchRef(s string) int {
	for strings.HasPrefix(s, "amp;") {
		s = s[4:]
	}
	if strings.HasPrefix(s, "lt;") {
		return matchName(s[3:])
	}
	if len(s) < 4 && (strings.HasPrefix("amp;", s) || strings.HasPrefix("lt;", s)) {
		return partialMatch
	}
	return noMatch
}

// neutralise returns prefix followed by the neutralised form of s. Unless
// final, it stops before a suffix that later text could change the meaning
// of (the start of a "<toolcall" or of an entity in front of one, or an
// incomplete UTF-8 sequence) and returns that suffix as rest. When final,
// such a suffix is decided now: an incomplete UTF-8 sequence becomes U+FFFD
// and a '<' that could still start a tag name becomes "&lt;".
//
// It copies only once something changes: with no prefix and nothing to
// replace (most chunks of a model's text), out is s itself, or its start.
func neutralise(prefix, s string, final bool) (out, rest string) {
	var dst []byte // nil until a replacement
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '<' || c == '&':
			m := noMatch
			if c == '<' {
				m = matchName(s[i+1:])
			} else {
				m = matchRef(s[i+1:])
			}
			if m == partialMatch && !final {
				return joined(dst, prefix, s[last:i]), s[i:]
			}
			// A '<' that could still start a tag name when the text ends is
			// escaped too: text appended later, after a flush, could
			// otherwise complete it. A lone '&' cannot form a tag.
			if m == fullMatch || m == partialMatch && c == '<' {
				dst = copied(dst, prefix, s, s[last:i])
				if c == '<' {
					dst = append(dst, "&lt;"...)
				} else {
					dst = append(dst, "&amp;"...)
				}
				last = i + 1
			}
			i++
		case c == 0:
			dst = utf8.AppendRune(copied(dst, prefix, s, s[last:i]), utf8.RuneError)
			i++
			last = i
		case c < utf8.RuneSelf:
			i++
		default:
			if !final && !utf8.FullRuneInString(s[i:]) {
				return joined(dst, prefix, s[last:i]), s[i:]
			}
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				dst = utf8.AppendRune(copied(dst, prefix, s, s[last:i]), utf8.RuneError)
				last = i + 1
			}
			i += n
		}
	}
	return joined(dst, prefix, s[last:]), ""
}

// copied appends done, the text before a replacement, to dst, which it
// first makes, holding prefix, when no replacement came before.
func copied(dst []byte, prefix, s, done string) []byte {
	if dst == nil {
		dst = append(make([]byte, 0, len(prefix)+len(s)+8), prefix...)
	}
	return append(dst, done...)
}

// joined is neutralise's answer: dst and the unchanged text after it, or,
// when nothing was replaced, prefix and that text (without a copy when
// prefix is empty).
func joined(dst []byte, prefix, tail string) string {
	if dst == nil {
		return prefix + tail
	}
	return string(append(dst, tail...))
}

// Neutralise returns untrusted text in the form a Document stores it: no
// part of it can be read as a ToolCall tag, invalid UTF-8 and NUL are
// replaced by U+FFFD, and RestoreText gives the text back.
func Neutralise(s string) string {
	out, _ := neutralise("", s, true)
	return out
}

// Text returns the text of content as a reader sees it: the ToolCall
// elements (with the nested calls in their bodies) left out and the
// neutralisation undone (RestoreText).
func Text(content string) string {
	var b strings.Builder
	last := 0
	for _, sp := range Scan(content) {
		if sp.Parent < 0 {
			b.WriteString(content[last:sp.Start])
			last = sp.End
		}
	}
	b.WriteString(content[last:])
	return RestoreText(b.String())
}

// RestoreText reverses the neutralisation of untrusted text: each "&lt;"
// in front of a tag name becomes "<" again and each longer "&amp;…lt;" loses
// one "amp;". Renderers call it on the text of code spans and code blocks,
// where character references are shown as written.
func RestoreText(s string) string {
	i := strings.IndexByte(s, '&')
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i >= 0 {
		b.WriteString(s[:i])
		s = s[i:]
		if matchRef(s[1:]) == fullMatch {
			if strings.HasPrefix(s, "&amp;") {
				b.WriteByte('&')
				s = s[5:]
			} else { // "&lt;"
				b.WriteByte('<')
				s = s[4:]
			}
		} else {
			b.WriteByte('&')
			s = s[1:]
		}
		i = strings.IndexByte(s, '&')
	}
	b.WriteString(s)
	return b.String()
}

// escapeRawTags makes already neutralised text safe in case it is not:
// every '<' in front of a whole tag name becomes "&lt;" and invalid UTF-8
// and NUL become U+FFFD. Neutralised text passes through unchanged: it
// holds a raw '<' before a partial name only at its end, when the text that
// followed decided it was no tag (Document.AppendNeutralised checks that
// across chunks).
func escapeRawTags(s string) string {
	if strings.IndexByte(s, '<') < 0 && strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '<' && matchName(s[i+1:]) == fullMatch:
			b.WriteString("&lt;")
			i++
		case c == 0:
			b.WriteRune(utf8.RuneError)
			i++
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.WriteString(s[i : i+n])
			}
			i += n
		}
	}
	return b.String()
}
