package turnstate_test

import (
	"strings"
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
// formatted from (the write path) gives the state that parsing the markup
// would, through a start and updates, without parsing the markup or
// formatting the tag again.
func TestApplyTakesTheTag(t *testing.T) {
	tc := toolcallmarkup.ToolCall{Type: "search_documents", Status: toolcallmarkup.StatusPending, ID: "c1",
		Attrs: []toolcallmarkup.Attr{{Key: "query", Value: "resume & <more>"}}}
	running := tc
	running.Status = toolcallmarkup.StatusRunning
	done := running
	done.Status = toolcallmarkup.StatusSuccess
	done.Attrs = append(append([]toolcallmarkup.Attr(nil), tc.Attrs...), toolcallmarkup.Attr{Key: "count", Value: "3"})
	steps := []struct {
		typ toolmark.EventType
		tc  toolcallmarkup.ToolCall
	}{{toolmark.EventToolCallStarted, tc}, {toolmark.EventToolCallRunning, running}, {toolmark.EventToolCallSuccess, done}}
	parsed, tagged := turnstate.New(), turnstate.New()
	for _, st := range steps {
		data := toolmark.ToolCallData{ToolCallID: "c1", Name: tc.Type, Status: string(st.tc.Status), Markup: toolcallmarkup.OpenTag(st.tc)}
		if err := parsed.Apply(toolmark.Draft{Type: st.typ, Data: data}, time.Now()); err != nil {
			t.Fatal(err)
		}
		if err := tagged.Apply(toolmark.Draft{Type: st.typ, Data: data, Tag: st.tc}, time.Now()); err != nil {
			t.Fatal(err)
		}
		if parsed.Content() != tagged.Content() {
			t.Fatalf("%s: tagged %q, parsed %q", st.typ, tagged.Content(), parsed.Content())
		}
	}
	// The writer's text is kept as it is: a draft whose markup says more
	// than its tag shows the markup (the tag was not formatted again), and
	// a markup that does not parse is not parsed.
	other := turnstate.New()
	said := toolcallmarkup.OpenTag(toolcallmarkup.ToolCall{Type: "search_documents", Status: toolcallmarkup.StatusPending, ID: "c1",
		Attrs: []toolcallmarkup.Attr{{Key: "query", Value: "as the writer wrote it"}}})
	d := toolmark.Draft{Type: toolmark.EventToolCallStarted, Tag: tc,
		Data: toolmark.ToolCallData{ToolCallID: "c1", Name: tc.Type, Status: "pending", Markup: said}}
	if err := other.Apply(d, time.Now()); err != nil || !strings.Contains(other.Content(), "as the writer wrote it") {
		t.Errorf("the writer's markup was not kept: %q, %v", other.Content(), err)
	}
}
