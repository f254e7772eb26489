package client

import (
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// events numbers made-up events of one turn from seq 1 and decodes them.
func events(tb testing.TB, drafts ...toolmark.Draft) []Event {
	tb.Helper()
	out := make([]Event, len(drafts))
	for i, d := range drafts {
		ev, err := DecodeEvent(toolmark.Event{Seq: int64(i + 1), TurnID: "turn_1", MessageID: "msg_1", Type: d.Type,
			Time: time.Unix(1700000000, 0).UTC(), Data: mustJSON(tb, d.Data)})
		if err != nil {
			tb.Fatal(err)
		}
		out[i] = ev
	}
	return out
}

// call is the payload of an event of a tool call: its tag as it stands
// and, when given, the status text the server wrote.
func call(id, name string, st toolcallmarkup.Status, statusText string) toolmark.ToolCallData {
	tc := toolcallmarkup.ToolCall{ID: id, Type: name, Status: st, Attrs: []toolcallmarkup.Attr{{Key: "query", Value: "leases"}}}
	return toolmark.ToolCallData{ToolCallID: id, Name: name, Status: string(st), Markup: toolcallmarkup.OpenTag(tc), StatusText: statusText}
}

func text(s string) toolmark.Draft {
	return toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: s}}
}

// toolCall is the three events of a call that starts, runs and succeeds.
func toolCall(id, name, started string) []toolmark.Draft {
	return []toolmark.Draft{
		{Type: toolmark.EventToolCallStarted, Data: call(id, name, toolcallmarkup.StatusPending, started)},
		{Type: toolmark.EventToolCallRunning, Data: call(id, name, toolcallmarkup.StatusRunning, "")},
		{Type: toolmark.EventToolCallSuccess, Data: call(id, name, toolcallmarkup.StatusSuccess, "")},
	}
}

// contentRecorder keeps what Handlers.Content got and checks, at each
// call, that the pieces add up to accumulated (since the last piece that
// was the whole text).
type contentRecorder struct {
	t      *testing.T
	chunks []string
	joined string
}

func (r *contentRecorder) content(chunk, accumulated string) {
	r.chunks = append(r.chunks, chunk)
	r.joined += chunk
	if chunk == accumulated {
		r.joined = chunk // a snapshot replaced the text
	}
	if r.joined != accumulated {
		r.t.Errorf("pieces %q add up to %q, accumulated is %q", r.chunks, r.joined, accumulated)
	}
	if strings.TrimSpace(chunk) == "" {
		r.t.Errorf("Content got a piece of only whitespace: %q", chunk)
	}
}

// TestClientContentHoldsWhitespace: the blank lines between tool calls and at
// the end of an answer never reach Content alone; those between come in
// front of the text that follows them.
func TestClientContentHoldsWhitespace(t *testing.T) {
	drafts := []toolmark.Draft{
		{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{Model: "demo"}},
		text("\n"), // before any text: held too
		text("Let me look."),
		text("\n\n"),
	}
	drafts = append(drafts, toolCall("c1", "search_documents", "")...)
	drafts = append(drafts, text("\n\n"), text(" \t"))
	drafts = append(drafts, toolCall("c2", "fetch_url", "")...)
	drafts = append(drafts, text("\n\n"), text("A lease "), text(" "), text("expires."), text("\n"), text("\n\n"),
		toolmark.Draft{Type: toolmark.EventTurnCompleted, Data: toolmark.TurnEndData{Status: toolmark.TurnCompleted}})

	rec := &contentRecorder{t: t}
	var order []string
	acc := NewAccumulator(&Handlers{
		Content: func(chunk, accumulated string) {
			rec.content(chunk, accumulated)
			order = append(order, "text")
		},
		ToolCall: func(u ToolCallUpdate) {
			if u.Stage == StageStart {
				order = append(order, "tool")
			}
		},
	})
	for _, ev := range events(t, drafts...) {
		if err := acc.Add(ev); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"\nLet me look.", "\n\n\n\n \t\n\nA lease ", " expires."}
	if strings.Join(rec.chunks, "|") != strings.Join(want, "|") {
		t.Errorf("chunks %q, want %q", rec.chunks, want)
	}
	if got := strings.Join(order, " "); got != "text tool tool text text" {
		t.Errorf("order %q: the text between the calls must come after both", got)
	}
	if acc.Text() != rec.joined+"\n\n\n" {
		t.Errorf("Text %q: it keeps the whole text, trailing whitespace too", acc.Text())
	}
}

// TestClientContentHoldsWhitespaceAcrossSnapshot: a snapshot that adds only
// whitespace gives nothing; text after it comes with that whitespace; a
// snapshot that replaces the text gives it whole.
func TestClientContentHoldsWhitespaceAcrossSnapshot(t *testing.T) {
	rec := &contentRecorder{t: t}
	acc := NewAccumulator(&Handlers{Content: rec.content})
	add := func(ev Event) {
		t.Helper()
		if err := acc.Add(ev); err != nil {
			t.Fatal(err)
		}
	}
	evs := events(t,
		toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{Model: "demo"}},
		text("Hello"))
	add(evs[0])
	add(evs[1])
	snap := func(seq int64, content string) Event {
		ev, err := DecodeEvent(toolmark.Event{Seq: seq, TurnID: "turn_1", Type: toolmark.EventSnapshot,
			Data: mustJSON(t, toolmark.SnapshotData{Content: content, Seq: seq, Status: toolmark.TurnRunning})})
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	add(snap(5, "Hello\n\n"))
	if len(rec.chunks) != 1 {
		t.Fatalf("chunks %q after a snapshot of whitespace", rec.chunks)
	}
	add(snap(8, "Hello\n\nworld"))
	add(snap(9, "Goodbye"))
	want := []string{"Hello", "\n\nworld", "Goodbye"}
	if strings.Join(rec.chunks, "|") != strings.Join(want, "|") {
		t.Errorf("chunks %q, want %q", rec.chunks, want)
	}
}

// TestClientStartHasNameAndTitle: Start gets the tool's name and the status
// text the server wrote, or the one the tag gives when it wrote none; each
// ToolCall update has the title of its stage.
func TestClientStartHasNameAndTitle(t *testing.T) {
	drafts := []toolmark.Draft{{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{Model: "demo"}}}
	drafts = append(drafts, toolCall("c1", "search_documents", "Preparing the search…")...)
	drafts = append(drafts, toolCall("c2", "lookup_weather", "")...)
	var starts []ToolStart
	titles := map[string][]string{}
	acc := NewAccumulator(&Handlers{
		Start: func(s ToolStart) { starts = append(starts, s) },
		ToolCall: func(u ToolCallUpdate) {
			if len(starts) == 0 || starts[len(starts)-1].ID != u.Call.ID {
				t.Errorf("ToolCall %s (%s) before its Start", u.Call.ID, u.Stage)
			}
			titles[u.Call.ID] = append(titles[u.Call.ID], u.Title)
		},
	})
	for _, ev := range events(t, drafts...) {
		if err := acc.Add(ev); err != nil {
			t.Fatal(err)
		}
	}
	want := []ToolStart{
		{ID: "c1", Name: "search_documents", Title: "Preparing the search…"},
		{ID: "c2", Name: "lookup_weather", Title: "Preparing lookup_weather…"},
	}
	if len(starts) != len(want) {
		t.Fatalf("starts %+v, want %+v", starts, want)
	}
	for i := range want {
		if starts[i] != want[i] {
			t.Errorf("start %d: %+v, want %+v", i, starts[i], want[i])
		}
	}
	if got := strings.Join(titles["c2"], " | "); got != "Preparing lookup_weather… | Running lookup_weather… | lookup_weather finished" {
		t.Errorf("titles of c2: %s", got)
	}
}
