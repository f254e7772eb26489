package tui

import (
	"strings"
	"testing"
)

// TestCodePiece: the lines of an open plain code block written from the
// learnt pattern are glamour's, byte for byte, at every width and style;
// a line the pattern cannot vouch for (wide or combining characters, as
// wide as the block, a control character: nothing but printable ASCII is
// written as it is) and a style without the pattern are left to glamour.
func TestCodePiece(t *testing.T) {
	const head = "```text\n"
	for _, width := range []int{30, 80, 120} {
		for _, style := range []string{"dark", "light", "dracula", "notty"} {
			r := newRenderer(width, style)
			cols := r.codeStyleFor(head).cols
			if cols == 0 != (style == "notty") {
				t.Errorf("%d %s: %d columns of code", width, style, cols)
			}
			for _, rest := range []string{"A", "A\n", "A\n\n", "A\n\nB", "\n", "  x := 1 // cut m", "a\nb\nc\n", strings.Repeat("y", max(cols-1, 0)) + "\nz"} {
				got, ok := r.codePiece(head, rest)
				if want := strings.Split(r.render(head+rest), "\n"); ok && strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("%d %s %q:\n got %q\nwant %q", width, style, rest, got, want)
				}
				if !ok && cols > 0 {
					t.Errorf("%d %s %q: not written from the pattern", width, style, rest)
				}
			}
			for _, rest := range []string{"中文\n", strings.Repeat("y", cols) + "\n", "e\u0301\n", "\x1b[31mred\n", "\x7f\n"} {
				if _, ok := r.codePiece(head, rest); ok {
					t.Errorf("%d %s %q: written from the pattern", width, style, rest)
				}
			}
		}
	}
}
