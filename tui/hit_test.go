package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
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

// TestHitMarkKept: a search hit's mark is set again when its turn is
// rendered anew (a resize), and goes when it is cleared (a message sent,
// another conversation).
func TestHitMarkKept(t *testing.T) {
	msg := func(id string, role toolmark.MessageRole, text string) client.Message {
		var m client.Message
		m.ID, m.Role, m.Content, m.Status, m.TurnID = id, role, text, toolmark.MessageComplete, "t"+id
		return m
	}
	msgs := []client.Message{msg("q1", toolmark.RoleUser, "First?"), msg("a1", toolmark.RoleAssistant, "Plain."),
		msg("q2", toolmark.RoleUser, "Second?"), msg("a2", toolmark.RoleAssistant, "A quokka lease, held.")}
	c := newChat(80, "dark")
	c.resize(80, 10)
	c.history = entriesOf(msgs)
	c.draw(true)
	marks := func() int { return strings.Count(strings.Join(c.lines, "\n"), "\x1b[7mquokka") }
	if !c.showHit(msgs, hitAt{msgID: "a2", query: "Quokka"}) {
		t.Fatal("the hit was not found")
	}
	if marks() != 1 {
		t.Fatalf("%d marks, want 1", marks())
	}
	c.resize(40, 10)
	if marks() != 1 || !c.hitInView() {
		t.Errorf("after a resize: %d marks, in view %v", marks(), c.hitInView())
	}
	c.clearHit()
	c.draw(false)
	if marks() != 0 {
		t.Errorf("cleared: %d marks", marks())
	}
}
