package simplifiedagent_test

import (
	"context"
	"math"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent"
)

// TestReportProgress: a built-in tool's progress becomes tool_progress
// events between its running and final events; NaN, progress outside a
// call and progress after the call are dropped; a message loses its
// control characters.
func TestReportProgress(t *testing.T) {
	var late context.Context
	steps := funcTool{name: "steps", fn: func(ctx context.Context, _ string) (string, error) {
		simplifiedagent.ReportProgress(ctx, 1, 2, "first\x1b[2J half")
		simplifiedagent.ReportProgress(ctx, math.NaN(), 2, "")
		for range 1000 { // too soon after the first: dropped
			simplifiedagent.ReportProgress(ctx, 1.5, 2, "")
		}
		simplifiedagent.ReportProgress(ctx, 2, 2, "") // the total: kept
		late = ctx
		return "done", nil
	}}
	simplifiedagent.ReportProgress(context.Background(), 1, 1, "outside")
	m := &scripted{replies: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{toolCall("c", "steps", "{}")}}, {Content: "ok"}}}
	_, rec, err := runChecked(t, simplifiedagent.Request{Model: m, Input: "go", Tools: []simplifiedagent.Tool{steps}})
	if err != nil {
		t.Fatal(err)
	}
	simplifiedagent.ReportProgress(late, 3, 2, "after")
	var order []toolmark.EventType
	var got []toolmark.ToolProgressData
	for _, e := range rec.all() {
		switch d := e.Data.(type) {
		case toolmark.ToolProgressData:
			got = append(got, d)
			order = append(order, e.Type)
		case toolmark.ToolCallData:
			order = append(order, e.Type)
		}
	}
	want := []toolmark.EventType{toolmark.EventToolCallStarted, toolmark.EventToolCallDelta, toolmark.EventToolCallRunning,
		toolmark.EventToolProgress, toolmark.EventToolProgress, toolmark.EventToolCallSuccess}
	if len(order) != len(want) {
		t.Fatalf("events %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("events %v, want %v", order, want)
		}
	}
	if got[0].Progress != 1 || got[0].Total != 2 || got[0].Message != "first [2J half" || got[0].ToolCallID == "" {
		t.Errorf("first progress: %+v", got[0])
	}
}
