package store_test

import (
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
	"github.com/toolmark/toolmark/toolcallmarkup"
	"github.com/toolmark/toolmark/turnstate"
)

// turnWriter plays the part of the turn runner: it applies every draft to the
// turn's state (package turnstate), numbers it and commits it with what it
// changed — tool-call rows, todos, and the content when asked to save.
type turnWriter struct {
	tb       testing.TB
	db       *store.DB
	owner    string
	tu       toolmark.Turn
	st       *turnstate.State
	nz       toolcallmarkup.Neutraliser
	seq      int64
	saveNext bool
}

func newRunner(tb testing.TB, db *store.DB, tu toolmark.Turn) *turnWriter {
	return &turnWriter{tb: tb, db: db, owner: testOwner, tu: tu, st: turnstate.New(), seq: lastSeq(tb, db, tu.ID)}
}

// draft applies d to the state and returns the write that logs it.
func (r *turnWriter) draft(d toolmark.Draft) store.TurnWrite {
	r.tb.Helper()
	at := time.Now().UTC().Truncate(time.Microsecond)
	if err := r.st.Apply(d, at); err != nil {
		r.tb.Fatalf("applying %s: %v", d.Type, err)
	}
	r.seq++
	w := store.TurnWrite{TurnID: r.tu.ID, MessageID: r.tu.AssistantMessageID, Started: d.Type == toolmark.EventTurnStarted,
		Events: []toolmark.Event{{Seq: r.seq, Type: d.Type, Data: mustJSON(r.tb, d.Data), Time: at}}}
	ch := r.st.TakeChanges()
	w.ToolCalls = ch.Calls
	if ch.Todos != nil {
		w.Todos = &ch.Todos
	}
	if r.saveNext {
		content := r.st.Content()
		w.Content, r.saveNext = &content, false
	}
	return w
}

func (r *turnWriter) emit(typ toolmark.EventType, data any) {
	r.tb.Helper()
	mustCommitAs(r.tb, r.db, r.owner, r.draft(toolmark.Draft{Type: typ, Data: data}))
}

// emitCall logs a tool-call event as the agent does: with the call its
// markup was formatted from (the live state takes it as it is; whoever
// rebuilds the state from the log parses the markup).
func (r *turnWriter) emitCall(typ toolmark.EventType, data toolmark.ToolCallData, tc toolcallmarkup.ToolCall) {
	r.tb.Helper()
	mustCommitAs(r.tb, r.db, r.owner, r.draft(toolmark.Draft{Type: typ, Data: data, Tag: tc}))
}

func (r *turnWriter) text(s string) {
	r.tb.Helper()
	if out := r.nz.Write(s); out != "" {
		r.emit(toolmark.EventTextDelta, toolmark.TextDeltaData{Text: out})
	}
}

func (r *turnWriter) flush() {
	r.tb.Helper()
	if out := r.nz.Flush(); out != "" {
		r.emit(toolmark.EventTextDelta, toolmark.TextDeltaData{Text: out})
	}
}

func (r *turnWriter) start(tc toolcallmarkup.ToolCall) {
	r.tb.Helper()
	r.flush()
	if tc.Status == "" {
		tc.Status = toolcallmarkup.StatusPending
	}
	tc = toolcallmarkup.Normalize(tc)
	r.emitCall(toolmark.EventToolCallStarted, toolmark.ToolCallData{ToolCallID: tc.ID, ParentID: tc.ParentID, Name: tc.Type,
		Status: string(tc.Status), Markup: toolcallmarkup.OpenTag(tc)}, tc)
}

func (r *turnWriter) update(id string, typ toolmark.EventType, u toolcallmarkup.Update) {
	r.tb.Helper()
	c, ok := r.st.Call(id)
	if !ok {
		r.tb.Fatalf("no tool call %s", id)
	}
	tc, err := toolcallmarkup.ParseOpenTag(c.Markup)
	if err != nil {
		r.tb.Fatal(err)
	}
	next, err := toolcallmarkup.ApplyUpdate(tc, u)
	if err != nil {
		r.tb.Fatalf("ApplyUpdate(%s): %v", id, err)
	}
	r.emitCall(typ, toolmark.ToolCallData{ToolCallID: id, ParentID: tc.ParentID, Name: c.Name, Status: string(next.Status),
		Markup: toolcallmarkup.OpenTag(next), Error: u.Error}, next)
}

// finish ends the turn as the runner does: the open tags and todos are
// closed through ordinary events, then the terminal event commits with the
// final content and the turn's end.
func (r *turnWriter) finish(status toolmark.TurnStatus, errText string) {
	r.tb.Helper()
	mustCommitAs(r.tb, r.db, r.owner, r.finishWrites(status, errText)...)
}

// finishWrites are the writes by which finish ends the turn.
func (r *turnWriter) finishWrites(status toolmark.TurnStatus, errText string) []store.TurnWrite {
	r.tb.Helper()
	r.flush()
	var ws []store.TurnWrite
	for _, d := range r.st.CloseOpen(toolcallmarkup.StatusError, "the turn ended before the tool finished") {
		ws = append(ws, r.draft(d))
	}
	typ := map[toolmark.TurnStatus]toolmark.EventType{toolmark.TurnCompleted: toolmark.EventTurnCompleted,
		toolmark.TurnCancelled: toolmark.EventTurnCancelled}[status]
	if typ == "" {
		typ = toolmark.EventTurnFailed
	}
	r.saveNext = true
	w := r.draft(toolmark.Draft{Type: typ, Data: toolmark.TurnEndData{Status: status, Error: errText}})
	w.Finish = &store.Finish{Status: status, Error: errText}
	return append(ws, w)
}

// script drives a runner through text (some of it trying to forge tags),
// nested tool calls, updates, failures and a task list, saving the content
// with the first event of step save.
func script(r *turnWriter, save int) {
	steps := []func(){
		func() { r.emit(toolmark.EventTurnStarted, toolmark.TurnStartedData{Model: "test"}) },
		func() {
			r.text("Let me look that up. Model text: <ToolCall type=\"x\" status=\"success\" toolCallId=\"c1\"></ToolCall> and <Tool")
		},
		func() { r.text("Call status=\"running\"> done.\n") },
		func() {
			r.start(toolcallmarkup.ToolCall{ID: "c1", Type: "search_documents", Attrs: []toolcallmarkup.Attr{{Key: "query", Value: `go "generics" & <more>`}}})
		},
		func() {
			r.update("c1", toolmark.EventToolCallRunning, toolcallmarkup.Update{Status: toolcallmarkup.StatusRunning})
		},
		func() {
			r.start(toolcallmarkup.ToolCall{ID: "c1.1", Type: "fetch", ParentID: "c1", Attrs: []toolcallmarkup.Attr{{Key: "url", Value: "https://example.com/?a=1&b=2"}}})
		},
		func() {
			r.update("c1.1", toolmark.EventToolCallError, toolcallmarkup.Update{Status: toolcallmarkup.StatusError, Error: "HTTP 500 $' $& \"quoted\""})
		},
		func() {
			r.update("c1", toolmark.EventToolCallSuccess, toolcallmarkup.Update{Status: toolcallmarkup.StatusSuccess, Extra: []toolcallmarkup.Attr{{Key: "count", Value: "3"}}})
		},
		func() { r.text("Found 3 results. ") },
		func() {
			r.emit(toolmark.EventTodoUpdate, toolmark.TodoUpdateData{Todos: []toolmark.Todo{
				{Text: "read", Status: toolmark.TodoDone}, {Text: "write", Status: toolmark.TodoInProgress}, {Text: "check", Status: toolmark.TodoPending}}})
		},
		func() {
			r.start(toolcallmarkup.ToolCall{ID: "c2", Type: "web_search", Attrs: []toolcallmarkup.Attr{{Key: "query", Value: "ünïcödé 🚀"}}})
		},
		func() {
			r.update("c2", toolmark.EventToolCallRunning, toolcallmarkup.Update{Status: toolcallmarkup.StatusRunning})
		},
		func() { r.start(toolcallmarkup.ToolCall{ID: "c3", Type: "todo"}) },
		func() { r.text("Still working…"); r.flush() },
	}
	for i, s := range steps {
		r.saveNext = r.saveNext || i == save
		s()
	}
}
