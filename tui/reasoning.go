package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/statustext"
)

// reasoning renders a reasoning model's thinking above its answer, folded
// to one line ("▸ Thought for 12 s", or the spinner and "Thinking…" while
// the model thinks); the expanded view (Ctrl-O) unfolds it. The thinking
// is the model's text: sanitised, never markdown or terminal control.
func (r *renderer) reasoning(acc *client.Accumulator, expanded bool, frame string) string {
	rs := acc.Reasoning()
	if rs == nil {
		return ""
	}
	if acc.Thinking() && !acc.Status().Final() {
		return statusLine(statustext.Thinking, frame)
	}
	text := strings.TrimSpace(Sanitize(rs.Text))
	if text == "" && rs.DurationMs == 0 {
		return "" // nothing to read and no time taken (a signature, a redacted block)
	}
	if !expanded || text == "" {
		return styleMuted.Render("▸ " + statustext.Thought(rs.DurationMs))
	}
	var b strings.Builder
	b.WriteString(styleMuted.Render("▾ " + statustext.Thought(rs.DurationMs)))
	for _, line := range strings.Split(ansi.Wrap(text, max(r.width-4, 10), ""), "\n") {
		b.WriteString("\n" + styleMuted.Render("│ "+line))
	}
	return b.String()
}
