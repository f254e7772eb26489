package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolmark/toolmark"
)

// TestCommitReasoning: a message's reasoning is saved with its content, a
// write without reasoning leaves it, the end of the turn replaces it; the
// message shows its text and duration and never its provider items, which
// the history hands back.
func TestCommitReasoning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	parts := []toolmark.ReasoningPart{{Kind: toolmark.ReasoningThinking, Text: "hmm", Signature: "EqSig==", Round: 1},
		{Kind: toolmark.ReasoningRedacted, Data: "EmwKAhgB", Round: 1}}
	w := write(t, f.turn, 0, toolmark.Draft{Type: toolmark.EventReasoningDelta, Data: toolmark.ReasoningDeltaData{Round: 1, Text: "hmm"}})
	content := ""
	w.Content, w.Reasoning = &content, &toolmark.Reasoning{Text: "hmm", DurationMs: 1200, Parts: parts[:1]}
	mustCommitAs(t, f.db, testOwner, w)
	w = write(t, f.turn, 1, toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "Answer."}})
	content = "Answer."
	w.Content = &content
	mustCommitAs(t, f.db, testOwner, w)
	ms, err := f.db.ListMessages(ctx, f.user.ID, f.conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r := ms[1].Reasoning; r == nil || r.Text != "hmm" || r.DurationMs != 1200 {
		t.Fatalf("reasoning after a write without it: %+v, want the one saved before", r)
	}
	end := finishWrite(t, f.turn, 2, toolmark.TurnCompleted, "", "Answer.")
	end.Reasoning = &toolmark.Reasoning{Text: "hmm", DurationMs: 1500, Parts: parts}
	mustCommitAs(t, f.db, testOwner, end)

	page, err := f.db.OpenConversation(ctx, f.user.ID, f.conv.ID, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	m := page.Messages[1].Message
	if m.Reasoning == nil || m.Reasoning.DurationMs != 1500 || len(m.Reasoning.Parts) != 2 {
		t.Fatalf("page's reasoning %+v", m.Reasoning)
	}
	b, _ := json.Marshal(m)
	if !strings.Contains(string(b), `"reasoning":{"text":"hmm","durationMs":1500}`) || strings.Contains(string(b), "EqSig") {
		t.Errorf("the message's JSON shows %s: want the text and duration, never the signature", b)
	}
	hist, err := f.db.ConversationHistory(ctx, f.conv.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 1 || len(hist[0].Reasoning) != 2 || hist[0].Reasoning[0] != parts[0] || hist[0].Reasoning[1] != parts[1] {
		t.Errorf("history's reasoning %+v, want %+v", hist, parts)
	}
}
