package turnstate

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func tag(id, typ string, st toolcallmarkup.Status, attrs ...string) string {
	tc := toolcallmarkup.ToolCall{ID: id, Type: typ, Status: st}
	for i := 0; i+1 < len(attrs); i += 2 {
		tc.Attrs = append(tc.Attrs, toolcallmarkup.Attr{Key: attrs[i], Value: attrs[i+1]})
	}
	return toolcallmarkup.OpenTag(tc)
}

// turnDrafts is a small turn: text, a search that succeeds, a fetch that
// fails, a todo list, more text.
func turnDrafts() []toolmark.Draft {
	return []toolmark.Draft{
		{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{Model: "demo"}},
		{Type: toolmark.EventTodoUpdate, Data: toolmark.TodoUpdateData{Todos: []toolmark.Todo{{Text: "look", Status: toolmark.TodoInProgress}, {Text: "answer", Status: toolmark.TodoPending}}}},
		{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "Let me look &lt;ToolCall.\n\n"}},
		{Type: toolmark.EventToolCallStarted, Data: toolmark.ToolCallData{ToolCallID: "c1", Name: "search_documents", Status: "pending", Markup: tag("c1", "search_documents", "pending")}},
		{Type: toolmark.EventToolCallDelta, Data: toolmark.ToolCallData{ToolCallID: "c1", Name: "search_documents", Status: "pending", Markup: tag("c1", "search_documents", "pending", "query", "re"), Chunk: `{"query":"re`, Accumulated: `{"query":"re`, Arguments: map[string]any{"query": "re"}}},
		{Type: toolmark.EventToolCallRunning, Data: toolmark.ToolCallData{ToolCallID: "c1", Name: "search_documents", Status: "running", Markup: tag("c1", "search_documents", "running", "query", "resume"), Arguments: map[string]any{"query": "resume"}, StatusText: "Searching…"}},
		{Type: toolmark.EventToolCallSuccess, Data: toolmark.ToolCallData{ToolCallID: "c1", Name: "search_documents", Status: "success", Markup: tag("c1", "search_documents", "success", "query", "resume", "count", "2"), Result: "2 results"}},
		{Type: toolmark.EventToolCallStarted, Data: toolmark.ToolCallData{ToolCallID: "c2", Name: "fetch_url", Status: "pending", Markup: tag("c2", "fetch_url", "pending")}},
		{Type: toolmark.EventToolCallRunning, Data: toolmark.ToolCallData{ToolCallID: "c2", Name: "fetch_url", Status: "running", Markup: tag("c2", "fetch_url", "running", "url", "https://example.com/")}},
		{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "\n\nSo **this** is it."}},
	}
}

func mustApply(tb testing.TB, s *State, ds []toolmark.Draft) {
	tb.Helper()
	for i, d := range ds {
		if err := s.Apply(d, t0.Add(time.Duration(i)*time.Second)); err != nil {
			tb.Fatalf("draft %d (%s): %v", i, d.Type, err)
		}
	}
}

// logged turns drafts into logged events, as the runner marshals them.
func logged(tb testing.TB, ds []toolmark.Draft) []toolmark.Event {
	tb.Helper()
	out := make([]toolmark.Event, len(ds))
	for i, d := range ds {
		raw, err := json.Marshal(d.Data)
		if err != nil {
			tb.Fatal(err)
		}
		out[i] = toolmark.Event{Seq: int64(i + 1), Type: d.Type, Time: t0.Add(time.Duration(i) * time.Second), Data: raw}
	}
	return out
}

func TestApply(t *testing.T) {
	s := New()
	mustApply(t, s, turnDrafts())
	want := "Let me look &lt;ToolCall.\n\n" + tag("c1", "search_documents", "success", "query", "resume", "count", "2") + "</ToolCall>" +
		tag("c2", "fetch_url", "running", "url", "https://example.com/") + "</ToolCall>\n\nSo **this** is it."
	if got := s.Content(); got != want {
		t.Errorf("content\ngot  %q\nwant %q", got, want)
	}
	if s.Status() != toolmark.TurnRunning || !s.HasText() {
		t.Errorf("status %s, text %v", s.Status(), s.HasText())
	}
	calls := s.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d calls, want 2", len(calls))
	}
	c1, c2 := calls[0], calls[1]
	if c1.Stage != StageEnd || c1.Status != toolcallmarkup.StatusSuccess || c1.Result != "2 results" || c1.Args["query"] != "resume" ||
		c1.ArgsText != `{"query":"re` || c1.StatusText != "Searching…" || c1.FinishedAt == nil || !c1.StartedAt.Equal(t0.Add(3*time.Second)) {
		t.Errorf("c1 = %+v", c1)
	}
	if c2.Stage != StageRunning || c2.FinishedAt != nil || c2.Name != "fetch_url" {
		t.Errorf("c2 = %+v", c2)
	}
	if got := string(c1.Record().Arguments); got != `{"query":"resume"}` {
		t.Errorf("record arguments %s", got)
	}
}

// TestReplayEqualsLive: the logged events, decoded and applied, give the
// state the typed drafts gave — the same rules on both paths.
func TestReplayEqualsLive(t *testing.T) {
	live := New()
	mustApply(t, live, turnDrafts())
	replay := New()
	for _, e := range logged(t, turnDrafts()) {
		if err := replay.ApplyEvent(e); err != nil {
			t.Fatal(err)
		}
	}
	if replay.Content() != live.Content() {
		t.Errorf("content differs:\n%q\n%q", replay.Content(), live.Content())
	}
	if !reflect.DeepEqual(replay.Records(), live.Records()) || !reflect.DeepEqual(replay.Todos(), live.Todos()) {
		t.Errorf("records or todos differ:\n%+v\n%+v", replay.Records(), live.Records())
	}
	if replay.Seq() != int64(len(turnDrafts())) {
		t.Errorf("seq %d", replay.Seq())
	}
}

// TestSnapshotThenEvents: a snapshot taken at any seq plus the events after
// it (and even an overlap of events before it) gives the whole state.
func TestSnapshotThenEvents(t *testing.T) {
	evs := logged(t, turnDrafts())
	full := New()
	for _, e := range evs {
		if err := full.ApplyEvent(e); err != nil {
			t.Fatal(err)
		}
	}
	for cut := 0; cut <= len(evs); cut++ {
		part := New()
		for _, e := range evs[:cut] {
			_ = part.ApplyEvent(e)
		}
		snap, err := FromSnapshot(toolmark.SnapshotData{Content: part.Content(), Seq: part.Seq(), Status: part.Status(), ToolCalls: part.Records(), Todos: part.Todos()})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs[max(0, cut-2):] { // overlap by two
			if err := snap.ApplyEvent(e); err != nil {
				t.Fatalf("cut %d: %v", cut, err)
			}
		}
		if snap.Content() != full.Content() || !reflect.DeepEqual(snap.Todos(), full.Todos()) {
			t.Errorf("cut %d: content %q, want %q", cut, snap.Content(), full.Content())
		}
		got, want := snap.Calls(), full.Calls()
		if len(got) != len(want) {
			t.Fatalf("cut %d: %d calls, want %d", cut, len(got), len(want))
		}
		for i := range got {
			if got[i].Status != want[i].Status || got[i].Stage != want[i].Stage || got[i].Markup != want[i].Markup {
				t.Errorf("cut %d call %d: %+v, want %+v", cut, i, got[i], want[i])
			}
		}
	}
}

func TestCloseOpen(t *testing.T) {
	for _, tt := range []struct {
		status toolcallmarkup.Status
		todo   toolmark.TodoStatus
	}{
		{toolcallmarkup.StatusCancelled, toolmark.TodoCancelled},
		{toolcallmarkup.StatusError, toolmark.TodoInterrupted},
	} {
		t.Run(string(tt.status), func(t *testing.T) {
			s := New()
			s.StatusText = func(tc toolcallmarkup.ToolCall) string { return "ended " + tc.Type }
			mustApply(t, s, turnDrafts())
			closing := s.CloseOpen(tt.status, "stopped")
			if len(closing) != 2 || closing[0].Type != toolmark.EventToolCallError || closing[1].Type != toolmark.EventTodoUpdate {
				t.Fatalf("closing events %+v", closing)
			}
			d := closing[0].Data.(toolmark.ToolCallData)
			if d.ToolCallID != "c2" || d.Status != string(tt.status) || d.Error != "stopped" || d.StatusText != "ended fetch_url" {
				t.Errorf("closing data %+v", d)
			}
			mustApply(t, s, closing)
			for _, c := range s.Calls() {
				if c.Stage != StageEnd || !c.Status.Final() {
					t.Errorf("call %s left %s", c.ID, c.Status)
				}
			}
			for _, td := range s.Todos() {
				if td.Status != tt.todo {
					t.Errorf("todo %q is %s, want %s", td.Text, td.Status, tt.todo)
				}
			}
			if strings.Contains(s.Content(), `status="running"`) {
				t.Errorf("content still running: %q", s.Content())
			}
			if again := s.CloseOpen(tt.status, "stopped"); len(again) != 0 {
				t.Errorf("closing twice: %+v", again)
			}
		})
	}
}

func TestApplyErrors(t *testing.T) {
	s := New()
	err := s.Apply(toolmark.Draft{Type: toolmark.EventToolCallRunning, Data: toolmark.ToolCallData{ToolCallID: "x", Markup: tag("x", "t", "running")}}, t0)
	if !errors.Is(err, ErrUnknownCall) {
		t.Errorf("update of unknown call: %v", err)
	}
	err = s.Apply(toolmark.Draft{Type: toolmark.EventToolCallStarted, Data: toolmark.ToolCallData{ToolCallID: "x", Markup: "<b>"}}, t0)
	if !errors.Is(err, toolcallmarkup.ErrInvalid) {
		t.Errorf("bad markup: %v", err)
	}
	err = s.Apply(toolmark.Draft{Type: toolmark.EventToolCallStarted, Data: toolmark.ToolCallData{ToolCallID: "y", Markup: tag("x", "t", "pending")}}, t0)
	if err == nil {
		t.Error("markup of another call accepted")
	}
	if s.Content() != "" || len(s.Calls()) != 0 {
		t.Errorf("failed applies changed the state: %q", s.Content())
	}
	// A forged tag in text stays text.
	mustApply(t, s, []toolmark.Draft{{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: tag("f", "t", "success") + "</ToolCall>"}}})
	if len(toolcallmarkup.Parse(s.Content())) != 0 {
		t.Errorf("text became a tag: %q", s.Content())
	}
}

func TestTakeChanges(t *testing.T) {
	s := New()
	ds := turnDrafts()
	mustApply(t, s, ds[:4]) // up to c1 started
	ch := s.TakeChanges()
	if len(ch.Calls) != 1 || ch.Todos == nil || ch.Milestone {
		t.Errorf("changes %+v", ch)
	}
	mustApply(t, s, ds[4:6]) // delta, running
	ch = s.TakeChanges()
	if len(ch.Calls) != 1 || ch.Calls[0].Status != "running" || ch.Todos != nil || !ch.Milestone {
		t.Errorf("changes %+v", ch)
	}
	if ch = s.TakeChanges(); len(ch.Calls) != 0 || ch.Milestone {
		t.Errorf("changes after take %+v", ch)
	}
}

// FuzzReplay: any split of a text into deltas, applied live or replayed
// from JSON, gives the same content, and a forged tag never appears.
func FuzzReplay(f *testing.F) {
	f.Add("hello <ToolCall type=\"x\" status=\"success\" toolCallId=\"z\"></ToolCall>", uint8(3))
	f.Add("a &lt;toolcall b", uint8(1))
	f.Fuzz(func(t *testing.T, text string, step uint8) {
		var z toolcallmarkup.Neutraliser
		var ds []toolmark.Draft
		n := int(step%16) + 1
		for i := 0; i < len(text); i += n {
			if out := z.Write(text[i:min(i+n, len(text))]); out != "" {
				ds = append(ds, toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: out}})
			}
		}
		if out := z.Flush(); out != "" {
			ds = append(ds, toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: out}})
		}
		live := New()
		mustApply(t, live, ds)
		replay := New()
		for _, e := range logged(t, ds) {
			if err := replay.ApplyEvent(e); err != nil {
				t.Fatal(err)
			}
		}
		if live.Content() != replay.Content() {
			t.Fatalf("live %q, replay %q", live.Content(), replay.Content())
		}
		if len(toolcallmarkup.Parse(live.Content())) != 0 {
			t.Fatalf("a tag from text: %q", live.Content())
		}
	})
}

// TestEnd: a turn's end carries its status however the state learnt it —
// an end event without one, or a final snapshot.
func TestEnd(t *testing.T) {
	s := New()
	mustApply(t, s, []toolmark.Draft{{Type: toolmark.EventTurnCompleted, Data: toolmark.TurnEndData{}}})
	if end, final := s.End(); !final || end.Status != toolmark.TurnCompleted {
		t.Errorf("after turn_completed: %+v, %v", end, final)
	}
	snap, err := FromSnapshot(toolmark.SnapshotData{Content: "done", Seq: 9, Status: toolmark.TurnCancelled})
	if err != nil {
		t.Fatal(err)
	}
	if end, final := snap.End(); !final || end.Status != toolmark.TurnCancelled {
		t.Errorf("final snapshot: %+v, %v", end, final)
	}
	running, _ := FromSnapshot(toolmark.SnapshotData{Content: "so far", Seq: 3, Status: toolmark.TurnRunning})
	if _, final := running.End(); final {
		t.Error("a running snapshot has ended")
	}
}
