package liveview

import (
	"testing"
	"unicode/utf16"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/markdown"
)

// TestReasoningFrames: a follower gets the thinking whole in a reset, then
// only what it grew by (from its length in UTF-16 units), nothing while it
// does not change, and the duration once the round's thinking ends; what
// it pieces together is the thinking.
func TestReasoningFrames(t *testing.T) {
	l := newEventLog(t)
	v := New(markdown.New())
	apply := func() {
		for _, e := range l.evs {
			if err := v.ApplyEvent(e); err != nil {
				t.Fatal(err)
			}
		}
	}
	held := []uint16{}
	follow := func(since int64) (Update, int64) {
		u, err := v.Update(since)
		if err != nil {
			t.Fatal(err)
		}
		if r := u.Reasoning; r != nil {
			held = append(held[:r.From], utf16.Encode([]rune(r.Text))...)
		}
		return u, u.Version
	}
	l.add(toolmark.EventReasoningDelta, toolmark.ReasoningDeltaData{Round: 1, Text: "Héllo 🙂 <b>"})
	apply()
	u, since := follow(-1)
	if u.Reasoning == nil || u.Reasoning.From != 0 || !u.Reasoning.Thinking {
		t.Fatalf("first frame's reasoning %+v", u.Reasoning)
	}
	l.add(toolmark.EventReasoningDelta, toolmark.ReasoningDeltaData{Round: 1, Text: " more"})
	apply()
	u, since = follow(since)
	if u.Reasoning == nil || u.Reasoning.Text != " more" || u.Reasoning.From != len(utf16.Encode([]rune("Héllo 🙂 <b>"))) {
		t.Fatalf("growth %+v", u.Reasoning)
	}
	l.add(toolmark.EventTextDelta, toolmark.TextDeltaData{Text: "Answer"})
	apply()
	if u, since = follow(since); u.Reasoning != nil {
		t.Errorf("unchanged thinking sent again: %+v", u.Reasoning)
	}
	l.add(toolmark.EventReasoningDelta, toolmark.ReasoningDeltaData{Round: 1, Done: true, DurationMs: 2400})
	apply()
	u, _ = follow(since)
	if u.Reasoning == nil || u.Reasoning.Thinking || u.Reasoning.DurationMs != 2400 || u.Reasoning.Text != "" {
		t.Errorf("end of thinking %+v", u.Reasoning)
	}
	if got := string(utf16.Decode(held)); got != "Héllo 🙂 <b> more" {
		t.Errorf("the follower holds %q", got)
	}
}
