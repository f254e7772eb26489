package tui

import (
	"math"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/toolmark/toolmark/client"
)

// thoughtFor is the fold's line of a model that thought for ms
// milliseconds: "Thought for 12 s".
func thoughtFor(ms int64) string {
	return "Thought for " + strconv.Itoa(max(1, int(math.Round(float64(ms)/1000)))) + " s"
}

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
		return statusLine("Thinking…", frame)
	}
	text := strings.TrimSpace(Sanitize(rs.Text))
	if text == "" && rs.DurationMs == 0 {
		return "" // nothing to read and no time taken (a signature, a redacted block)
	}
	if !expanded || text == "" {
		return styleMuted.Render("▸ " + thoughtFor(rs.DurationMs))
	}
	var b strings.Builder
	b.WriteString(styleMuted.Render("▾ " + thoughtFor(rs.DurationMs)))
	for _, line := range strings.Split(ansi.Wrap(text, max(r.width-4, 10), ""), "\n") {
		b.WriteString("\n" + styleMuted.Render("│ "+line))
	}
	return b.String()
}
