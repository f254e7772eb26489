package statustext_test

import (
	"testing"

	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

func TestProgress(t *testing.T) {
	mcp := toolcallmarkup.ToolCall{Type: "everything_x", Attrs: []toolcallmarkup.Attr{{Key: "tool", Value: "trigger-long-running-operation"}}}
	builtin := toolcallmarkup.ToolCall{Type: "ingest"}
	tests := []struct {
		name            string
		tc              toolcallmarkup.ToolCall
		progress, total float64
		msg, want       string
	}{
		{"of a total", mcp, 2, 3, "", "trigger-long-running-operation: 2 of 3"},
		{"no total", builtin, 7, 0, "", "ingest: 7"},
		{"percent", builtin, 40, 100, "", "ingest: 40%"},
		{"fraction", builtin, 0.5, 1, "", "ingest: 0.5 of 1"},
		{"message", builtin, 1, 2, "  reading\tpage 1 ", "ingest: 1 of 2\nreading page 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := statustext.Progress(tt.tc, tt.progress, tt.total, tt.msg); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
