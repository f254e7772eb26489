package runner

import (
	"strings"
	"testing"

	"github.com/toolmark/toolmark"
)

// TestTextJoinsPendingText checks that a text_delta emitted while the
// turn's last event still waits for a commit joins it when that is text
// too, and starts an event of its own after any other event or past the
// bound.
func TestTextJoinsPendingText(t *testing.T) {
	text := func(s string) toolmark.Draft {
		return toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: s}}
	}
	tool := toolmark.Draft{Type: toolmark.EventToolCallStarted, Data: toolmark.ToolCallData{ToolCallID: "c1"}}
	var j job
	emit := func(d toolmark.Draft) {
		if !j.mergeTextLocked(d) {
			j.pending = append(j.pending, pendingEvent{seq: int64(len(j.pending) + 1), d: d})
		}
	}
	emit(text("Hello, "))
	emit(text("world."))
	emit(tool)
	emit(text(" After"))
	emit(text(" the tool."))
	emit(text(strings.Repeat("x", maxMergedText)))
	var got []string
	for i, p := range j.pending {
		if p.seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, p.seq)
		}
		if d, ok := p.d.Data.(toolmark.TextDeltaData); ok {
			got = append(got, d.Text)
		} else {
			got = append(got, string(p.d.Type))
		}
	}
	want := []string{"Hello, world.", "tool_call_started", " After the tool.", strings.Repeat("x", maxMergedText)}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("pending events %q, want %q", got, want)
	}
	// Taken by a commit, the text waits no more: the next starts anew.
	j.pending = nil
	if j.mergeTextLocked(text("next")) {
		t.Fatal("text merged with nothing pending")
	}
}
