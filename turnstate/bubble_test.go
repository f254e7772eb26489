package turnstate_test

import (
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/toolcallmarkup"
	"github.com/toolmark/toolmark/turnstate"
)

func TestBubble(t *testing.T) {
	search := toolcallmarkup.ToolCall{Type: "search_documents", Status: toolcallmarkup.StatusRunning, ID: "c1",
		Attrs: []toolcallmarkup.Attr{{Key: "query", Value: "resume"}}}
	done := search
	done.Status = toolcallmarkup.StatusSuccess
	call := func(typ toolmark.EventType, tc toolcallmarkup.ToolCall) toolmark.Draft {
		return toolmark.Draft{Type: typ, Data: toolmark.ToolCallData{ToolCallID: tc.ID, Name: tc.Type,
			Status: string(tc.Status), Markup: toolcallmarkup.OpenTag(tc), StatusText: statustext.Text(tc)}}
	}
	text := func(s string) toolmark.Draft {
		return toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: s}}
	}
	st := turnstate.New()
	steps := []struct {
		name  string
		apply []toolmark.Draft
		want  string
	}{
		{"nothing yet", nil, ""},
		{"queued behind others", []toolmark.Draft{{Type: toolmark.EventTurnQueued, Data: toolmark.TurnQueuedData{Position: 2}}}, statustext.Queued},
		{"queued with a slot free", []toolmark.Draft{{Type: toolmark.EventTurnQueued, Data: toolmark.TurnQueuedData{Position: 0}}}, statustext.Thinking},
		{"started", []toolmark.Draft{{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}}}, statustext.Thinking},
		{"blank text keeps thinking", []toolmark.Draft{text("\n\n")}, statustext.Thinking},
		{"a running tool", []toolmark.Draft{call(toolmark.EventToolCallStarted, search)}, statustext.Text(search)},
		{"a sub-agent phase", []toolmark.Draft{{Type: toolmark.EventSubagentStatus,
			Data: toolmark.SubagentStatusData{ToolCallID: "c1", Phase: "round", Message: "Reading results"}}}, "Reading results"},
		{"the tool ends", []toolmark.Draft{call(toolmark.EventToolCallSuccess, done)}, statustext.Text(done)},
		{"text clears it", []toolmark.Draft{text("The answer")}, ""},
		{"the end", []toolmark.Draft{{Type: toolmark.EventTurnCompleted, Data: toolmark.TurnEndData{}}}, ""},
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

// TestApplyTakesTheTag: a draft that carries the call its markup was
// formatted from is applied without parsing the markup (the write path),
// and gives the state that parsing would.
func TestApplyTakesTheTag(t *testing.T) {
	tc := toolcallmarkup.ToolCall{Type: "search_documents", Status: toolcallmarkup.StatusRunning, ID: "c1",
		Attrs: []toolcallmarkup.Attr{{Key: "query", Value: "resume & <more>"}}}
	markup := toolcallmarkup.OpenTag(tc)
	parsed, tagged := turnstate.New(), turnstate.New()
	d := toolmark.Draft{Type: toolmark.EventToolCallStarted, Data: toolmark.ToolCallData{ToolCallID: "c1", Name: tc.Type,
		Status: string(tc.Status), Markup: markup}}
	if err := parsed.Apply(d, time.Now()); err != nil {
		t.Fatal(err)
	}
	// The markup of the tagged draft does not even parse: only the tag is used.
	d.Data = toolmark.ToolCallData{ToolCallID: "c1", Name: tc.Type, Status: string(tc.Status), Markup: "<ToolCall"}
	d.Tag = tc
	if err := tagged.Apply(d, time.Now()); err != nil {
		t.Fatalf("a tagged draft's markup was parsed: %v", err)
	}
	if parsed.Content() != tagged.Content() {
		t.Errorf("tagged %q, parsed %q", tagged.Content(), parsed.Content())
	}
}
