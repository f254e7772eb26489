package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/toolmark/toolmark/markdown"
)

// TestLiveBlockRendersAsWhole streams long trailing blocks — a paragraph on
// one line, plain and with markup, and a long open code block — a few
// bytes at a time, and checks that every draw shows what rendering the
// block whole shows, line for line, while the frozen lines grow (only the
// rest is rendered again).
func TestLiveBlockRendersAsWhole(t *testing.T) {
	sentence := "This sentence pads the demo answer to the length the load test asked for. "
	tests := []struct {
		name, text string
		frozen     bool // lines must freeze
	}{
		{"paragraph", strings.Repeat(sentence, 60), true},
		{"paragraph with markup", strings.Repeat("A **bold** claim, `code` and a [link](https://example.com) in one sentence. ", 40), false},
		{"open code block", "```go\n" + strings.Repeat("\tfmt.Println(\"this line pads the demo answer\", i) // to the length asked for\n", 80), true},
		{"list", "- " + strings.Repeat(sentence, 20), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRenderer(80, "dark")
			whole := newRenderer(80, "dark")
			for n := 7; n < len(tt.text)+7; n += 37 {
				block := "\n" + markdown.HoldBack(tt.text[:min(n, len(tt.text))])
				got := visible(strings.Join(r.liveBlock(block), "\n"))
				want := visible(whole.render(plainOpenFence(block)))
				if got != want {
					t.Fatalf("after %d bytes (%d lines frozen):\n got %q\nwant %q", n, len(r.frozen.lines), tail(got), tail(want))
				}
			}
			if tt.frozen && len(r.frozen.lines) == 0 {
				t.Fatal("no line was frozen: the block was rendered whole at every draw")
			}
		})
	}
}

// visible is what a terminal shows of rendered lines: no escapes, no
// padding at the lines' ends.
func visible(s string) string {
	lines := strings.Split(ansi.Strip(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

func tail(s string) string { return s[max(0, len(s)-300):] }
