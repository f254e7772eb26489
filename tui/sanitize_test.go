package tui

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "hello, wörld ✓\n\tnext", "hello, wörld ✓\n\tnext"},
		{"csi colour", "red \x1b[41mbackground\x1b[0m end", "red background end"},
		{"csi clear screen", "a\x1b[2J\x1b[Hb", "ab"},
		{"osc title bel", "x\x1b]0;pwned\x07y", "xy"},
		{"osc hyperlink st", "\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"osc 52 clipboard", "\x1b]52;c;cm0gLXJmIC8K\x07safe", "safe"},
		{"dcs", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
		{"two-byte esc", "a\x1bcb\x1b7c", "abc"},
		{"c1 csi as utf-8", "a\u009b31mb", "ab"},
		{"c1 osc as utf-8", "a\u009d0;t\u009cb", "ab"},
		{"raw c1 byte", "a\x9b31mb", "a\uFFFD31mb"},
		{"unterminated osc ends at newline", "a\x1b]0;title\nb", "a\nb"},
		{"csi broken by text", "a\x1b[31é", "aé"},
		{"esc esc", "a\x1b\x1b[1mb", "ab"},
		{"c0 controls", "a\rb\bc\x07d\x00e\x7ff", "abcdef"},
		{"lone esc at end", "abc\x1b", "abc"},
		{"unterminated osc", "abc\x1b]0;title", "abc"},
		{"invalid utf-8", "a\xffb", "a\uFFFDb"},
		{"crlf", "line\r\nnext", "line\nnext"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Sanitize(tt.in); got != tt.want {
				t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSanitizeLine(t *testing.T) {
	if got, want := SanitizeLine("a\nb\tc\x1b[1m"), "a b c"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// FuzzSanitize: the output is valid UTF-8 with no control character but
// newline and tab, sanitising it again changes nothing, and clean text is
// returned as it is.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[31mred", "\x1b]0;t\x07", "\u009b1m", "\x9b", "a\r\nb", "\x1bP\x1b\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Sanitize(s)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q: %q", s, out)
		}
		for _, r := range out {
			if isControl(r) || r == 0x1b {
				t.Fatalf("control %U left in %q (from %q)", r, out, s)
			}
		}
		if again := Sanitize(out); again != out {
			t.Fatalf("not idempotent: %q → %q → %q", s, out, again)
		}
		if clean(s) && out != s {
			t.Fatalf("clean text changed: %q → %q", s, out)
		}
		if strings.Count(out, "\n") > strings.Count(s, "\n") {
			t.Fatalf("newlines added: %q → %q", s, out)
		}
	})
}
