package turnstate_test

import (
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/turnstate"
)

// TestReasoning: thinking gathers round by round (each round a paragraph),
// the durations add up, the items keep their order; while the model
// thinks the bubble leaves the word to the fold; the end of a round's
// thinking is worth saving; a snapshot carries it all.
func TestReasoning(t *testing.T) {
	st := turnstate.New()
	apply := func(d toolmark.ReasoningDeltaData) {
		t.Helper()
		if err := st.Apply(toolmark.Draft{Type: toolmark.EventReasoningDelta, Data: d}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	_ = st.Apply(toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}}, time.Now())
	if st.Reasoning() != nil || st.Bubble() != "Thinking…" {
		t.Fatalf("before any thinking: %+v, bubble %q", st.Reasoning(), st.Bubble())
	}
	apply(toolmark.ReasoningDeltaData{Round: 1, Text: "First, "})
	apply(toolmark.ReasoningDeltaData{Round: 1, Text: "search."})
	if !st.Thinking() || st.Bubble() != "" {
		t.Errorf("thinking %v, bubble %q: want the fold to say it", st.Thinking(), st.Bubble())
	}
	_ = st.TakeChanges()
	sig := toolmark.ReasoningPart{Kind: toolmark.ReasoningThinking, Text: "First, search.", Signature: "s1", Round: 1}
	apply(toolmark.ReasoningDeltaData{Round: 1, Done: true, DurationMs: 1500, Parts: []toolmark.ReasoningPart{sig}})
	if st.Thinking() || !st.TakeChanges().Milestone {
		t.Error("the end of a round's thinking is not a milestone")
	}
	apply(toolmark.ReasoningDeltaData{Round: 2, Text: "Now answer."})
	apply(toolmark.ReasoningDeltaData{Round: 2, Done: true, DurationMs: 500})
	r := st.Reasoning()
	if r.Text != "First, search.\n\nNow answer." || r.DurationMs != 2000 || len(r.Parts) != 1 || r.Parts[0] != sig {
		t.Fatalf("reasoning %+v", r)
	}
	again, err := turnstate.FromSnapshot(toolmark.SnapshotData{Status: toolmark.TurnRunning, Reasoning: r})
	if err != nil || again.Reasoning().Text != r.Text || len(again.Reasoning().Parts) != 1 {
		t.Errorf("from a snapshot: %+v (%v)", again.Reasoning(), err)
	}
}
