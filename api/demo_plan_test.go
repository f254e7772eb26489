package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/testserver"
	"github.com/toolmark/toolmark/simplifiedagent/demo"
)

// TestDemoPlanTicks reads a research turn's plan from the stored event log,
// in order: each sub-agent's step is ticked by the update that follows its
// sub-agent's end, one step per update; "Write the answer" is in progress,
// with every other step done, before the answer's first words, and is
// ticked only after its last ones.
func TestDemoPlanTicks(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 2 * time.Millisecond})
	c := newClient(t, srv.URL, "")
	turn := c.postTurn(c.newConversation(), "Research how cancellation works; what happens after a crash?")
	c.allEvents(turn.ID, -1) // until the turn ends
	evs, err := srv.DB.EventsAfter(context.Background(), turn.ID, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	ended := map[string]bool{} // sub-agents that finished
	var plans [][]toolmark.Todo
	text, textBeforeWriting, textAfterWritten := 0, 0, 0
	prevDone := 0
	for _, e := range evs {
		switch e.Type {
		case toolmark.EventSubagentStatus:
			var d toolmark.SubagentStatusData
			mustUnmarshal(t, e.Data, &d)
			if d.Phase == "completed" {
				ended[d.ToolCallID] = true
			}
		case toolmark.EventTextDelta:
			var d toolmark.TextDeltaData
			mustUnmarshal(t, e.Data, &d)
			if strings.TrimSpace(d.Text) == "" {
				continue
			}
			text++
			switch stepOf(last(plans), demo.WriteStep) {
			case toolmark.TodoInProgress:
			case toolmark.TodoDone:
				textAfterWritten++
			default:
				textBeforeWriting++
			}
		case toolmark.EventTodoUpdate:
			var d toolmark.TodoUpdateData
			mustUnmarshal(t, e.Data, &d)
			done := 0
			for _, td := range d.Todos[:len(d.Todos)-1] {
				if td.Status == toolmark.TodoDone {
					done++
				}
			}
			if done > prevDone && len(plans) > 0 && stepOf(last(plans), demo.WriteStep) == toolmark.TodoPending {
				// A research step ticked: by the sub-agent that just ended, one at a time.
				if !ended[d.ToolCallID] {
					t.Errorf("seq %d: step ticked by %q, which is no finished sub-agent", e.Seq, d.ToolCallID)
				}
				if done != prevDone+1 {
					t.Errorf("seq %d: %d steps ticked at once, want one", e.Seq, done-prevDone)
				}
			}
			if w := stepOf(d.Todos, demo.WriteStep); w == toolmark.TodoDone && text == 0 {
				t.Errorf("seq %d: %q ticked before any text", e.Seq, demo.WriteStep)
			} else if w == toolmark.TodoInProgress && done != len(d.Todos)-1 {
				t.Errorf("seq %d: %q begun with %d of %d steps done", e.Seq, demo.WriteStep, done, len(d.Todos)-1)
			}
			prevDone = done
			plans = append(plans, d.Todos)
		}
	}
	if len(ended) != 2 {
		t.Fatalf("%d sub-agents finished, want 2", len(ended))
	}
	var states []string
	for _, p := range plans {
		var s []string
		for _, td := range p {
			s = append(s, string(td.Status))
		}
		states = append(states, strings.Join(s, ","))
	}
	want := []string{
		"in_progress,in_progress,pending", // the plan, both sub-agents at work
		"", "",                            // each sub-agent's step ticked as it ends (either first)
		"done,done,in_progress", // writing
		"done,done,done",        // written
	}
	if len(states) != len(want) || states[0] != want[0] || states[3] != want[3] || states[4] != want[4] {
		t.Fatalf("plan states %q, want %q", states, want)
	}
	for _, s := range states[1:3] {
		if s != "done,in_progress,pending" && s != "in_progress,done,pending" && s != "done,done,pending" {
			t.Errorf("plan states %q: a sub-agent's tick is %q", states, s)
		}
	}
	if text == 0 || textBeforeWriting != 0 || textAfterWritten != 0 {
		t.Errorf("%d pieces of text, %d before %q was begun, %d after it was ticked; want all while writing",
			text, textBeforeWriting, demo.WriteStep, textAfterWritten)
	}
}

func stepOf(todos []toolmark.Todo, text string) toolmark.TodoStatus {
	for _, td := range todos {
		if td.Text == text {
			return td.Status
		}
	}
	return ""
}

func last[T any](s []T) T {
	var zero T
	if len(s) == 0 {
		return zero
	}
	return s[len(s)-1]
}

func mustUnmarshal(tb testing.TB, b []byte, v any) {
	tb.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		tb.Fatalf("decoding %s: %v", b, err)
	}
}
