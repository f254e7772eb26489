package turnstate_test

import (
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/toolcallmarkup"
	"github.com/toolmark/toolmark/turnstate"
)

// TestProgressBubble: a running call's tool_progress shows in the bubble
// with the MCP tool's own name; its end replaces it; progress of a call
// that is final, or unknown, changes nothing.
func TestProgressBubble(t *testing.T) {
	tc := toolcallmarkup.ToolCall{Type: "everything_trigger-long-running-operation", Status: toolcallmarkup.StatusRunning, ID: "c1",
		Attrs: []toolcallmarkup.Attr{{Key: "server", Value: "everything"}, {Key: "tool", Value: "trigger-long-running-operation"}}}
	done := tc
	done.Status = toolcallmarkup.StatusSuccess
	call := func(typ toolmark.EventType, tc toolcallmarkup.ToolCall) toolmark.Draft {
		return toolmark.Draft{Type: typ, Data: toolmark.ToolCallData{ToolCallID: tc.ID, Name: tc.Type,
			Status: string(tc.Status), Markup: toolcallmarkup.OpenTag(tc), StatusText: statustext.Text(tc)}}
	}
	progress := func(id string, p, total float64, msg string) toolmark.Draft {
		return toolmark.Draft{Type: toolmark.EventToolProgress, Data: toolmark.ToolProgressData{ToolCallID: id, Progress: p, Total: total, Message: msg}}
	}
	st := turnstate.New()
	steps := []struct {
		name  string
		apply []toolmark.Draft
		want  string
	}{
		{"started", []toolmark.Draft{{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}}, call(toolmark.EventToolCallStarted, tc)},
			"Running trigger-long-running-operation…"},
		{"progress", []toolmark.Draft{progress("c1", 2, 3, "")}, "trigger-long-running-operation: 2 of 3"},
		{"with a message", []toolmark.Draft{progress("c1", 2.5, 3, "copying  files")}, "trigger-long-running-operation: 2.5 of 3\ncopying files"},
		{"unknown call", []toolmark.Draft{progress("nope", 1, 1, "")}, "trigger-long-running-operation: 2.5 of 3\ncopying files"},
		{"the end", []toolmark.Draft{call(toolmark.EventToolCallSuccess, done)}, "trigger-long-running-operation finished"},
		{"late progress", []toolmark.Draft{progress("c1", 3, 3, "")}, "trigger-long-running-operation finished"},
	}
	for _, s := range steps {
		for _, d := range s.apply {
			if err := st.Apply(d, time.Now()); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
		}
		if got := st.Bubble(); got != s.want {
			t.Errorf("%s: got %q, want %q", s.name, got, s.want)
		}
	}
}
