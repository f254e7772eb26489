package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestMarkFirst(t *testing.T) {
	tests := []struct {
		name, line, q, want string
		ok                  bool
	}{
		{"plain", "a quokka lease", "Quokka", "a \x1b[7mquokka\x1b[27m lease", true},
		{"styled around", "\x1b[1mbold quokka\x1b[0m after", "quokka", "\x1b[1mbold \x1b[7mquokka\x1b[27m\x1b[0m after", true},
		{"style inside the match keeps what follows", "quo\x1b[31mkka red\x1b[0m", "quokka", "\x1b[7mquokka\x1b[27m\x1b[31m red\x1b[0m", true},
		{"hyperlink", "\x1b]8;;http://x\x1b\\quokka\x1b]8;;\x1b\\", "quokka", "\x1b]8;;http://x\x1b\\\x1b[7mquokka\x1b[27m\x1b]8;;\x1b\\", true},
		{"first only", "quokka quokka", "quokka", "\x1b[7mquokka\x1b[27m quokka", true},
		{"absent", "a lease", "quokka", "a lease", false},
		{"empty query", "a lease", " ", "a lease", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := markFirst(tt.line, tt.q)
			if got != tt.want || ok != tt.ok {
				t.Errorf("got %q %v, want %q %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// FuzzMarkFirst: marking never changes the text a line shows, and marks
// only what it finds.
func FuzzMarkFirst(f *testing.F) {
	f.Add("\x1b[1mbold quokka\x1b[0m after", "quokka")
	f.Add("quo\x1b[31mkka\x1b]8;;u\a", "QUOKKA")
	f.Add("\x1b[", "x")
	f.Fuzz(func(t *testing.T, line, q string) {
		got, ok := markFirst(line, q)
		if !ok {
			if got != line {
				t.Fatalf("nothing found, yet %q became %q", line, got)
			}
			return
		}
		if ansi.Strip(got) != ansi.Strip(line) {
			t.Fatalf("the text shown changed: %q → %q", ansi.Strip(line), ansi.Strip(got))
		}
		if !strings.Contains(got, "\x1b[7m") {
			t.Fatalf("found but not marked: %q", got)
		}
	})
}
