package tui

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Sanitize returns s safe to write to a terminal: escape sequences (CSI,
// OSC, DCS, APC, PM, SOS and two-byte ESC sequences) are removed whole,
// and so is every other C0 or C1 control character and DEL, except
// newline and tab. Invalid UTF-8 becomes U+FFFD first, so that a stray
// byte cannot start a sequence. Everything the terminal client prints that
// comes from the server — answer text, tool names, parameters, results,
// errors, titles — passes through it.
func Sanitize(s string) string {
	if clean(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = ansi.Strip(s)
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return -1
		}
		return r
	}, s)
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
