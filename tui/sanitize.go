package tui

import (
	"strings"
	"unicode/utf8"
)

// Sanitize returns s safe to write to a terminal: escape sequences (CSI,
// OSC, DCS, APC, PM, SOS and two-byte ESC sequences, in their 7-bit and
// C1 forms) are removed whole, and so is every other C0 or C1 control
// character and DEL, except newline and tab. Invalid UTF-8 becomes U+FFFD
// first, so that a stray byte cannot start a sequence. A string sequence
// (OSC, DCS…) left unterminated ends at the next newline, so a broken one
// cannot hide the text after it. Everything the terminal client prints
// that comes from the server — answer text, tool names, parameters,
// results, errors, titles — passes through it.
func Sanitize(s string) string {
	if clean(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	st := ground
	for _, r := range s {
		st = st.next(r, &b)
	}
	return b.String()
}

// sanitizer states: where in an escape sequence the input is.
type sanState int

const (
	ground    sanState = iota
	escape             // after ESC
	escInter           // in the intermediate bytes of an ESC sequence
	csi                // in a control sequence
	str                // in a string sequence (OSC, DCS, SOS, PM, APC)
	strEscape          // after ESC in a string sequence
)

// next consumes r in state st, writing what is printed to b, and returns
// the next state.
func (st sanState) next(r rune, b *strings.Builder) sanState {
	if r == '\n' { // a newline always shows and ends any sequence
		b.WriteRune(r)
		return ground
	}
	switch st {
	case escape:
		switch {
		case r == '[':
			return csi
		case r == ']' || r == 'P' || r == 'X' || r == '^' || r == '_':
			return str
		case r >= 0x20 && r <= 0x2f:
			return escInter
		case r >= 0x30 && r <= 0x7e:
			return ground
		}
		return ground.next(r, b)
	case escInter:
		switch {
		case r >= 0x20 && r <= 0x2f:
			return escInter
		case r >= 0x30 && r <= 0x7e:
			return ground
		}
		return ground.next(r, b)
	case csi:
		switch {
		case r >= 0x20 && r <= 0x3f:
			return csi
		case r >= 0x40 && r <= 0x7e:
			return ground
		}
		return ground.next(r, b)
	case str:
		switch r {
		case 0x07, 0x9c:
			return ground
		case 0x1b:
			return strEscape
		}
		return str
	case strEscape:
		if r == '\\' {
			return ground
		}
		return escape.next(r, b)
	}
	switch {
	case r == 0x1b:
		return escape
	case r == 0x9b:
		return csi
	case r == 0x90 || r == 0x98 || r == 0x9d || r == 0x9e || r == 0x9f:
		return str
	case isControl(r):
		return ground
	}
	b.WriteRune(r)
	return ground
}

// SanitizeLine is Sanitize for text shown on one line: newlines and tabs
// become spaces too.
func SanitizeLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return ' '
		}
		return r
	}, Sanitize(s))
}

// isControl reports whether r is a C0 or C1 control character or DEL,
// other than newline and tab.
func isControl(r rune) bool {
	return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f
}

// clean reports whether s needs no change: valid UTF-8 without controls.
func clean(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if isControl(rune(c)) {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || isControl(r) {
			return false
		}
		i += n
	}
	return true
}
