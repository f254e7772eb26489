package markdown

import (
	"strings"
	"testing"

	"github.com/yuin/goldmark/parser"
)

// TestRenderLiveBlocks: a fenced code block still open at the end of a
// streaming answer is highlighted while short, shown as plain code once it
// holds more than LiveHighlightMax bytes, and highlighted again once its
// fence closes; RenderBlocks always highlights; only the last block is
// ever left plain.
func TestRenderLiveBlocks(t *testing.T) {
	r := New()
	long := strings.Repeat("x := f(\"<b>\") // a line of code\n", LiveHighlightMax/30+1)
	cases := []struct {
		name, src   string
		highlighted bool
	}{
		{"short and open", "Here:\n\n```go\nx := 1\n", true},
		{"long and open", "Here:\n\n```go\n" + long, false},
		{"long, open, a blank line last", "Here:\n\n```go\n" + long + "\n\n", false},
		{"long and closed", "Here:\n\n```go\n" + long + "```\n", true},
		{"long and closed, text after", "```go\n" + long + "```\n\nDone.", true},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			live := renderAll(t, r.RenderLiveBlocks, tt.src)
			if got := strings.Contains(live, `class="chroma"`); got != tt.highlighted {
				t.Errorf("RenderLiveBlocks highlighted: %v, want %v:\n%.300s", got, tt.highlighted, live)
			}
			if !strings.Contains(live, `language-go`) || strings.Contains(live, "<b>") {
				t.Errorf("the code is not a go block with its text escaped:\n%.300s", live)
			}
			if whole := renderAll(t, r.RenderBlocks, tt.src); !strings.Contains(whole, `class="chroma"`) {
				t.Errorf("RenderBlocks did not highlight:\n%.300s", whole)
			}
		})
	}
}

func renderAll(t *testing.T, render func([]byte, []parser.Reference) ([]TopBlock, []parser.Reference, error), src string) string {
	t.Helper()
	blocks, _, err := render([]byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, tb := range blocks {
		b.WriteString(tb.HTML)
	}
	return b.String()
}
