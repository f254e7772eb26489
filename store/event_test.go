package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
	"github.com/toolmark/toolmark/toolcallmarkup"
	"github.com/toolmark/toolmark/turnstate"
)

// TestCommitManyTurns commits the writes of 50 turns in one call, round
// after round: every turn's events are gapless, and each call is one
// transaction (every row it writes carries the same xmin).
func TestCommitManyTurns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	const turns, rounds = 50, 4
	tus := make([]toolmark.Turn, turns)
	ids := make([]string, turns)
	msgs := make([]string, turns)
	for i := range tus {
		tus[i] = mustTurn(t, db, f.user.ID, mustConversation(t, db, f.user.ID).ID, "q")
		ids[i], msgs[i] = tus[i].ID, tus[i].AssistantMessageID
	}
	seqs := make([]int64, turns)
	for r := range rounds {
		ws := make([]store.TurnWrite, turns)
		var evTurns []string
		var evSeqs []int64
		for i, tu := range tus {
			n := 1 + (i+r)%4
			ds := make([]toolmark.Draft, n)
			for k := range ds {
				ds[k] = toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: fmt.Sprintf("%d.%d.%d ", i, r, k)}}
			}
			ws[i] = write(t, tu, seqs[i], ds...)
			ws[i].Started = r == 0
			content := fmt.Sprintf("turn %d after round %d", i, r)
			ws[i].Content = &content
			ws[i].ToolCalls = []toolmark.ToolCallRecord{{ID: fmt.Sprintf("c%d", r), Name: "search_documents"}}
			ws[i].Todos = &[]toolmark.Todo{{Text: fmt.Sprint("round ", r), Status: toolmark.TodoInProgress}}
			for _, e := range ws[i].Events {
				evTurns, evSeqs = append(evTurns, tu.ID), append(evSeqs, e.Seq)
			}
			seqs[i] += int64(n)
		}
		mustCommitAs(t, db, testOwner, ws...)
		// One transaction: every row this call wrote or updated carries
		// the same xmin.
		n := count(t, db, `
			select count(distinct x) from (
				select xmin::text as x from events where (turn_id, seq) in (select * from unnest($1::text[], $2::bigint[]))
				union all select xmin::text from tool_calls where turn_id = any($3) and id = $5
				union all select xmin::text from todos where turn_id = any($3)
				union all select xmin::text from messages where id = any($4)
				union all select xmin::text from turns where id = any($3) and $6
			) rows`, evTurns, evSeqs, ids, msgs, fmt.Sprintf("c%d", r), r == 0)
		if n != 1 {
			t.Errorf("round %d: the rows of one Commit carry %d transaction ids, want 1", r, n)
		}
	}
	for i, tu := range tus {
		es, err := db.EventsAfter(ctx, tu.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(es)) != seqs[i] {
			t.Fatalf("turn %d: got %d events, want %d", i, len(es), seqs[i])
		}
		for k, e := range es {
			if e.Seq != int64(k+1) || e.TurnID != tu.ID || e.MessageID != tu.AssistantMessageID {
				t.Fatalf("turn %d event %d: got seq %d turn %s message %s", i, k, e.Seq, e.TurnID, e.MessageID)
			}
		}
		got, _ := db.TurnByID(ctx, tu.ID)
		if got.Status != toolmark.TurnRunning || got.StartedAt == nil || got.LastSeq != seqs[i] {
			t.Errorf("turn %d: got status %s seq %d, want running at %d", i, got.Status, got.LastSeq, seqs[i])
		}
		if c, seq, _ := db.Snapshot(ctx, tu.ID); c != fmt.Sprintf("turn %d after round %d", i, rounds-1) || seq != seqs[i] {
			t.Errorf("turn %d: got snapshot %q at %d", i, c, seq)
		}
		if recs, _ := db.ToolCalls(ctx, tu.ID); len(recs) != rounds {
			t.Errorf("turn %d: got %d tool calls, want %d", i, len(recs), rounds)
		}
		if todos, _ := db.Todos(ctx, tu.ID); len(todos) != 1 || todos[0].Text != fmt.Sprint("round ", rounds-1) {
			t.Errorf("turn %d: got todos %v", i, todos)
		}
	}
	// Reading from the middle.
	page, err := db.EventsAfter(ctx, tus[0].ID, 3, 2)
	if err != nil || len(page) != 2 || page[0].Seq != 4 || page[1].Seq != 5 {
		t.Errorf("EventsAfter(3, 2) = %v, %v; want seqs 4 and 5", page, err)
	}
}

// TestCommitConcurrentOwners has four owners commit their own turns at the
// same time, as four replicas do.
func TestCommitConcurrentOwners(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	const owners, turns, rounds = 4, 5, 20
	tus := make([][]toolmark.Turn, owners)
	names := make([]string, owners)
	for o := range owners {
		names[o] = newOwner("replica")
		for range turns {
			tus[o] = append(tus[o], mustTurnAs(t, db, names[o], f.user.ID, mustConversation(t, db, f.user.ID).ID, "q"))
		}
	}
	errs := make(chan error, owners)
	for o := range owners {
		go func() {
			for r := range rounds {
				var ws []store.TurnWrite
				for _, tu := range tus[o] {
					ws = append(ws, write(t, tu, int64(2*r),
						toolmark.Draft{Type: toolmark.EventRoundStarted, Data: toolmark.RoundStartedData{Round: r + 1}},
						toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "x"}}))
				}
				if err := db.Commit(ctx, names[o], ws); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range owners {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, db, "select count(*) from events"); n != owners*turns*rounds*2 {
		t.Errorf("got %d events, want %d", n, owners*turns*rounds*2)
	}
	if n := count(t, db, "select count(*) from (select turn_id from events group by turn_id having max(seq) <> count(*)) gaps"); n != 0 {
		t.Errorf("%d turns have gaps in their seqs", n)
	}
}

// TestEventsNotify checks that one Commit announces every turn it wrote in
// one notification, "turnID:seq,turnID:seq", and that a cancel request is
// announced too.
func TestEventsNotify(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	db := f.db
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ch, err := db.Listen(ctx, store.ChannelEvents, store.ChannelCancel)
	if err != nil {
		t.Fatal(err)
	}
	b := mustTurn(t, db, f.user.ID, mustConversation(t, db, f.user.ID).ID, "b")
	c := mustTurn(t, db, f.user.ID, mustConversation(t, db, f.user.ID).ID, "c")
	queued := toolmark.Draft{Type: toolmark.EventTurnQueued, Data: toolmark.TurnQueuedData{}}
	started := toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}}
	mustCommitAs(t, db, testOwner,
		write(t, f.turn, 0, queued, started),
		write(t, b, 0, queued),
		write(t, c, 0, queued, started, toolmark.Draft{Type: toolmark.EventRoundStarted, Data: toolmark.RoundStartedData{Round: 1}}))
	if _, err := db.RequestCancel(ctx, f.user.ID, f.turn.ID); err != nil {
		t.Fatal(err)
	}
	// The cancel request comes second: the Commit sent one notification.
	want := []store.Notification{
		{Channel: store.ChannelEvents, Payload: f.turn.ID + ":2," + b.ID + ":1," + c.ID + ":3"},
		{Channel: store.ChannelCancel, Payload: f.turn.ID},
	}
	for _, w := range want {
		select {
		case n := <-ch:
			if n != w {
				t.Errorf("got notification %+v, want %+v", n, w)
			}
		case <-ctx.Done():
			t.Fatalf("no notification, want %+v", w)
		}
	}
	cancel()
	for range ch {
	}
}

// TestEventsNotifyManyTurns commits more turns than one notification can
// name: the payloads stay under PostgreSQL's limit and name every turn once.
func TestEventsNotifyManyTurns(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	db := f.db
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ch, err := db.Listen(ctx, store.ChannelEvents)
	if err != nil {
		t.Fatal(err)
	}
	const turns = 300
	want := map[string]bool{}
	var ws []store.TurnWrite
	for range turns {
		tu := mustTurn(t, db, f.user.ID, mustConversation(t, db, f.user.ID).ID, "q")
		ws = append(ws, write(t, tu, 0, toolmark.Draft{Type: toolmark.EventTurnQueued, Data: toolmark.TurnQueuedData{}}))
		want[tu.ID+":1"] = true
	}
	mustCommitAs(t, db, testOwner, ws...)
	notes := 0
	for len(want) > 0 {
		select {
		case n := <-ch:
			notes++
			if len(n.Payload) >= 8000 {
				t.Errorf("got a payload of %d bytes, want less than 8000", len(n.Payload))
			}
			for _, item := range strings.Split(n.Payload, ",") {
				if !want[item] {
					t.Fatalf("got unexpected or repeated item %q", item)
				}
				delete(want, item)
			}
		case <-ctx.Done():
			t.Fatalf("%d turns never announced", len(want))
		}
	}
	if notes > 3 {
		t.Errorf("got %d notifications for %d turns, want at most 3", notes, turns)
	}
	cancel()
	for range ch {
	}
}

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
		Events: []store.EventRow{{Seq: r.seq, Type: d.Type, Data: mustJSON(r.tb, d.Data), Time: at}}}
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
	r.emit(toolmark.EventToolCallStarted, toolmark.ToolCallData{ToolCallID: tc.ID, ParentID: tc.ParentID, Name: tc.Type,
		Status: string(tc.Status), Markup: toolcallmarkup.OpenTag(tc)})
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
	r.emit(typ, toolmark.ToolCallData{ToolCallID: id, ParentID: tc.ParentID, Name: c.Name, Status: string(next.Status),
		Markup: toolcallmarkup.OpenTag(next), Error: u.Error})
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

// TestContentRebuildsFromLog checks the store's promise: the stored content
// with its seq, tool calls and todos, plus the events after that seq,
// rebuild the live content (as the sweep and a client that follows the
// stream do), whenever the content was last saved.
func TestContentRebuildsFromLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, save := range []int{-1, 0, 3, 6, 9, 12, 13} {
		t.Run(fmt.Sprintf("content saved at step %d", save), func(t *testing.T) {
			f := newFixture(t)
			r := newRunner(t, f.db, f.turn)
			script(r, save)
			live := r.st.Content()
			content, seq, err := f.db.Snapshot(ctx, f.turn.ID)
			if err != nil {
				t.Fatal(err)
			}
			if (save < 0) != (seq == 0) {
				t.Errorf("got snapshot seq %d with save at step %d", seq, save)
			}
			calls, _ := f.db.ToolCalls(ctx, f.turn.ID)
			todos, _ := f.db.Todos(ctx, f.turn.ID)
			st, err := turnstate.FromSnapshot(toolmark.SnapshotData{Content: content, Seq: seq, Status: toolmark.TurnRunning, ToolCalls: calls, Todos: todos})
			if err != nil {
				t.Fatal(err)
			}
			events, err := f.db.EventsAfter(ctx, f.turn.ID, seq, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range events {
				if err := st.ApplyEvent(e); err != nil {
					t.Fatal(err)
				}
			}
			if got := st.Content(); got != live {
				t.Errorf("rebuilt content differs from live content\ngot:  %q\nwant: %q", got, live)
			}
			// The whole log, from nothing or over the snapshot, gives the
			// same content.
			all, _ := f.db.EventsAfter(ctx, f.turn.ID, 0, 0)
			fresh := turnstate.New()
			again, _ := turnstate.FromSnapshot(toolmark.SnapshotData{Content: content, Seq: seq, Status: toolmark.TurnRunning, ToolCalls: calls, Todos: todos})
			for _, e := range all {
				if err := fresh.ApplyEvent(e); err != nil {
					t.Fatal(err)
				}
				if err := again.ApplyEvent(e); err != nil {
					t.Fatal(err)
				}
			}
			if fresh.Content() != live || again.Content() != live {
				t.Errorf("replaying the whole log differs from the live content\nfresh: %q\nover:  %q\nwant:  %q", fresh.Content(), again.Content(), live)
			}
			if calls := toolcallmarkup.Parse(st.Content()); len(calls) != 4 {
				t.Errorf("got %d genuine tags, want 4 (forged ones must stay text): %+v", len(calls), calls)
			}
			// The tool-call rows and the todos agree with the log.
			for _, c := range fresh.Calls() {
				i := indexOf(calls, c.ID)
				if i < 0 || calls[i].Status != string(c.Status) || calls[i].ParentID != c.ParentID || calls[i].Name != c.Name {
					t.Errorf("tool call %s: stored %+v, log says %s", c.ID, calls, c.Status)
				}
			}
			if fmt.Sprint(todos) != fmt.Sprint(fresh.Todos()) {
				t.Errorf("got todos %v, log says %v", todos, fresh.Todos())
			}
		})
	}
}

func indexOf(recs []toolmark.ToolCallRecord, id string) int {
	for i, r := range recs {
		if r.ID == id {
			return i
		}
	}
	return -1
}

// TestCommitContentMovesForward commits a write whose events come before
// the stored content's: the content keeps the newer seq.
func TestCommitContentMovesForward(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	text := func(s string) toolmark.Draft {
		return toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: s}}
	}
	late := write(t, f.turn, 3, text("four"), text("five"))
	atFive := "at five"
	late.Content = &atFive
	mustCommitAs(t, f.db, testOwner, late)
	early := write(t, f.turn, 0, text("one"), text("two"), text("three"))
	atThree := "at three"
	early.Content = &atThree
	mustCommitAs(t, f.db, testOwner, early)
	if c, seq, _ := f.db.Snapshot(ctx, f.turn.ID); c != "at five" || seq != 5 {
		t.Errorf("got %q at %d, want \"at five\" at 5", c, seq)
	}
	if es, _ := f.db.EventsAfter(ctx, f.turn.ID, 0, 0); len(es) != 5 {
		t.Errorf("got %d events, want 5", len(es))
	}
	// The same seq again replaces the content.
	again := write(t, f.turn, 5, text("six"))
	atSix := "at six"
	again.Content = &atSix
	mustCommitAs(t, f.db, testOwner, again)
	if c, seq, _ := f.db.Snapshot(ctx, f.turn.ID); c != "at six" || seq != 6 {
		t.Errorf("got %q at %d, want \"at six\" at 6", c, seq)
	}
}

func TestPruneEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	r := newRunner(t, db, f.turn)
	r.text("answer")
	r.finish(toolmark.TurnCompleted, "")
	other := mustTurn(t, db, f.user.ID, mustConversation(t, db, f.user.ID).ID, "still running")
	mustCommit(t, db, other, toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}})

	if n, err := db.PruneEvents(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("PruneEvents(an hour ago) = %d, %v; want nothing pruned", n, err)
	}
	n, err := db.PruneEvents(ctx, time.Now().Add(time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("PruneEvents = %d, %v; want 2", n, err)
	}
	if _, err := db.EventsAfter(ctx, f.turn.ID, 0, 10); !errors.Is(err, store.ErrCursorPruned) {
		t.Errorf("EventsAfter(0) after pruning: got %v, want ErrCursorPruned", err)
	}
	if _, err := db.EventsAfter(ctx, f.turn.ID, 1, 10); !errors.Is(err, store.ErrCursorPruned) {
		t.Errorf("EventsAfter(1) after pruning: got %v, want ErrCursorPruned", err)
	}
	if es, err := db.EventsAfter(ctx, f.turn.ID, 2, 10); err != nil || len(es) != 0 {
		t.Errorf("EventsAfter(last seq) = %v, %v; want no events and no error", es, err)
	}
	if c, seq, err := db.Snapshot(ctx, f.turn.ID); err != nil || c != "answer" || seq != 2 {
		t.Errorf("snapshot after pruning: %q at %d, %v; want \"answer\" at 2", c, seq, err)
	}
	if tu, _ := db.TurnByID(ctx, f.turn.ID); tu.LastSeq != 2 {
		t.Errorf("got last seq %d after pruning, want 2", tu.LastSeq)
	}
	if es, err := db.EventsAfter(ctx, other.ID, 0, 10); err != nil || len(es) != 1 {
		t.Errorf("an active turn's events were pruned: %v, %v", es, err)
	}
	if n, _ := db.PruneEvents(ctx, time.Now().Add(time.Hour)); n != 0 {
		t.Errorf("second PruneEvents deleted %d, want 0", n)
	}
}

// TestCommit writes a turn's start, events, content, tool calls and todos,
// then ends it: the terminal event, the final content, the turn's status
// and its released lease commit together, and nothing is written after.
func TestCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	w := write(t, f.turn, 0,
		toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}},
		toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "partial"}})
	w.Started = true
	content := "partial"
	w.Content = &content
	w.ToolCalls = []toolmark.ToolCallRecord{{ID: "c1", Name: "search_documents", Arguments: []byte(`{"query":"go"}`)}}
	w.Todos = &[]toolmark.Todo{{Text: "look", Status: toolmark.TodoInProgress}}
	mustCommitAs(t, db, testOwner, w)
	tu, _ := db.TurnByID(ctx, f.turn.ID)
	if tu.Status != toolmark.TurnRunning || tu.StartedAt == nil || tu.LastSeq != 2 || tu.LeaseOwner != testOwner {
		t.Errorf("got turn %+v, want running at seq 2, leased", tu)
	}
	if c, seq, _ := db.Snapshot(ctx, f.turn.ID); c != "partial" || seq != 2 {
		t.Errorf("got snapshot %q at %d, want \"partial\" at 2", c, seq)
	}
	if recs, _ := db.ToolCalls(ctx, f.turn.ID); len(recs) != 1 || recs[0].Status != "pending" || recs[0].TurnID != f.turn.ID || string(recs[0].Arguments) != `{"query":"go"}` {
		t.Errorf("got tool calls %+v, want c1 pending with its arguments", recs)
	}
	if todos, _ := db.Todos(ctx, f.turn.ID); len(todos) != 1 || todos[0].Text != "look" {
		t.Errorf("got todos %v, want [look]", todos)
	}

	end := finishWrite(t, f.turn, 2, toolmark.TurnCompleted, "", "partial, done")
	now := time.Now()
	end.ToolCalls = []toolmark.ToolCallRecord{{ID: "c1", Name: "search_documents", Status: "success", Result: "2 hits", FinishedAt: &now}}
	mustCommitAs(t, db, testOwner, end)
	tu, _ = db.TurnByID(ctx, f.turn.ID)
	if tu.Status != toolmark.TurnCompleted || tu.LastSeq != 3 || tu.FinishedAt == nil || tu.LeaseOwner != "" || tu.LeaseExpiresAt != nil || tu.Error != "" {
		t.Errorf("got turn %+v, want completed at seq 3, without lease", tu)
	}
	ms, _ := db.ListMessages(ctx, f.user.ID, f.conv.ID)
	if ms[1].Content != "partial, done" || ms[1].Seq != 3 || ms[1].Status != toolmark.MessageComplete {
		t.Errorf("got message %+v, want the final content at seq 3, complete", ms[1])
	}
	if recs, _ := db.ToolCalls(ctx, f.turn.ID); len(recs) != 1 || recs[0].Status != "success" || string(recs[0].Arguments) != `{"query":"go"}` {
		t.Errorf("got tool calls %+v, want c1 success with its arguments", recs)
	}
	// The terminal event, the final content and the turn's end are one
	// transaction.
	if n := count(t, db, `
		select count(distinct x) from (
			select xmin::text as x from events where turn_id = $1 and seq = 3
			union all select xmin::text from messages where id = $2
			union all select xmin::text from turns where id = $1
		) rows`, f.turn.ID, f.turn.AssistantMessageID); n != 1 {
		t.Errorf("the end of the turn spans %d transactions, want 1", n)
	}

	// Nothing is written once the turn is final.
	late := write(t, f.turn, 3, toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "late"}})
	lateContent := "late"
	late.Content = &lateContent
	late.Todos = &[]toolmark.Todo{}
	late.ToolCalls = []toolmark.ToolCallRecord{{ID: "c2", Name: "late"}}
	wantLeaseLost(t, "Commit after finish", db.Commit(ctx, testOwner, []store.TurnWrite{late}), f.turn.ID)
	if n := count(t, db, "select count(*) from events"); n != 3 {
		t.Errorf("got %d events, want 3", n)
	}
	if c, seq, _ := db.Snapshot(ctx, f.turn.ID); c != "partial, done" || seq != 3 {
		t.Errorf("got snapshot %q at %d after a refused write", c, seq)
	}
	if recs, _ := db.ToolCalls(ctx, f.turn.ID); len(recs) != 1 {
		t.Errorf("got %d tool calls after a refused write, want 1", len(recs))
	}
	if todos, _ := db.Todos(ctx, f.turn.ID); len(todos) != 1 {
		t.Errorf("got todos %v after a refused write, want [look]", todos)
	}
}

// TestCommitFinishStatuses ends four turns in one Commit, one per final
// status: each message gets the matching status.
func TestCommitFinishStatuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	tests := []struct {
		status toolmark.TurnStatus
		err    string
		msg    toolmark.MessageStatus
	}{
		{toolmark.TurnCompleted, "", toolmark.MessageComplete},
		{toolmark.TurnFailed, "boom", toolmark.MessageFailed},
		{toolmark.TurnCancelled, "cancelled by the user", toolmark.MessageCancelled},
		{toolmark.TurnInterrupted, "interrupted", toolmark.MessageInterrupted},
	}
	var ws []store.TurnWrite
	var convs []toolmark.Conversation
	for _, tt := range tests {
		conv := mustConversation(t, db, f.user.ID)
		convs = append(convs, conv)
		tu := mustTurn(t, db, f.user.ID, conv.ID, "q")
		ws = append(ws, finishWrite(t, tu, 0, tt.status, tt.err, "answer "+string(tt.status)))
	}
	mustCommitAs(t, db, testOwner, ws...)
	for i, tt := range tests {
		t.Run(string(tt.status), func(t *testing.T) {
			tu, _ := db.TurnByID(ctx, ws[i].TurnID)
			if tu.Status != tt.status || tu.Error != tt.err || tu.LastSeq != 1 || tu.LeaseOwner != "" {
				t.Errorf("got turn %+v, want %s %q at seq 1 without lease", tu, tt.status, tt.err)
			}
			ms, _ := db.ListMessages(ctx, f.user.ID, convs[i].ID)
			if ms[1].Status != tt.msg || ms[1].Content != "answer "+string(tt.status) || ms[1].Seq != 1 {
				t.Errorf("got message %+v, want %s", ms[1], tt.msg)
			}
		})
	}
}

// TestCommitRefusesInvalidWrites gives Commit, for each kind of invalid
// write, an invalid write of one turn and a valid write of another: the
// invalid one is refused with its error and nothing of it is written; the
// valid one is committed.
func TestCommitRefusesInvalidWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, store.WithMaxContentBytes(1024))
	db := f.db
	str := func(s string) *string { return &s }
	text := toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "ok"}}
	tests := []struct {
		name  string
		spoil func(w *store.TurnWrite)
		code  string
	}{
		{"content not UTF-8", func(w *store.TurnWrite) { w.Content = str("caf\xe9") }, toolmark.EINVALID},
		{"content with NUL", func(w *store.TurnWrite) { w.Content = str("a\x00b") }, toolmark.EINVALID},
		{"content too large", func(w *store.TurnWrite) { w.Content = str(strings.Repeat("a", 1025)) }, toolmark.ETOOLARGE},
		{"final content too large", func(w *store.TurnWrite) {
			w.Content, w.Finish = str(strings.Repeat("é", 513)), &store.Finish{Status: toolmark.TurnCompleted}
		}, toolmark.ETOOLARGE},
		{"no events", func(w *store.TurnWrite) { w.Events = nil }, toolmark.EINVALID},
		{"no event type", func(w *store.TurnWrite) { w.Events[0].Type = "" }, toolmark.EINVALID},
		{"event data with NUL", func(w *store.TurnWrite) { w.Events[0].Data = []byte("{\"text\":\"a\x00\"}") }, toolmark.EINVALID},
		{"event data not UTF-8", func(w *store.TurnWrite) { w.Events[0].Data = []byte("{\"text\":\"\xff\"}") }, toolmark.EINVALID},
		{"event data too large", func(w *store.TurnWrite) {
			w.Events[0].Data = mustJSON(t, toolmark.TextDeltaData{Text: strings.Repeat("a", 1025)})
		}, toolmark.ETOOLARGE},
		{"event data not JSON", func(w *store.TurnWrite) { w.Events[0].Data = []byte("{bad") }, toolmark.EINVALID},
		{"finish without content", func(w *store.TurnWrite) { w.Finish = &store.Finish{Status: toolmark.TurnCompleted} }, toolmark.EINVALID},
		{"finish not final", func(w *store.TurnWrite) {
			w.Content, w.Finish = str("x"), &store.Finish{Status: toolmark.TurnRunning}
		}, toolmark.EINVALID},
		{"finish error with NUL", func(w *store.TurnWrite) {
			w.Content, w.Finish = str("x"), &store.Finish{Status: toolmark.TurnFailed, Error: "a\x00"}
		}, toolmark.EINVALID},
		{"todo with NUL", func(w *store.TurnWrite) { w.Todos = &[]toolmark.Todo{{Text: "a\x00", Status: toolmark.TodoPending}} }, toolmark.EINVALID},
		{"tool call without id", func(w *store.TurnWrite) { w.ToolCalls = []toolmark.ToolCallRecord{{Name: "x"}} }, toolmark.EINVALID},
		{"tool call arguments not JSON", func(w *store.TurnWrite) {
			w.ToolCalls = []toolmark.ToolCallRecord{{ID: "c1", Name: "x", Arguments: []byte("{")}}
		}, toolmark.EINVALID},
		{"tool call result not UTF-8", func(w *store.TurnWrite) {
			w.ToolCalls = []toolmark.ToolCallRecord{{ID: "c1", Name: "x", Result: "\xc3"}}
		}, toolmark.EINVALID},
		{"tool call status unknown", func(w *store.TurnWrite) {
			w.ToolCalls = []toolmark.ToolCallRecord{{ID: "c1", Name: "x", Status: "done"}}
		}, toolmark.EINVALID},
		{"malformed message id", func(w *store.TurnWrite) { w.MessageID = "\xff\x00" }, toolmark.ENOTFOUND},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := mustTurn(t, db, f.user.ID, mustConversation(t, db, f.user.ID).ID, "bad")
			good := mustTurn(t, db, f.user.ID, mustConversation(t, db, f.user.ID).ID, "good")
			bw := write(t, bad, 0, text)
			bw.Started = true
			tt.spoil(&bw)
			gw := write(t, good, 0, text)
			gw.Content = str("good")
			err := db.Commit(ctx, testOwner, []store.TurnWrite{bw, gw})
			wantRefused(t, "Commit", err, map[string]string{bad.ID: tt.code})
			if es, _ := db.EventsAfter(ctx, good.ID, 0, 0); len(es) != 1 {
				t.Errorf("the valid write: got %d events, want 1", len(es))
			}
			if c, seq, _ := db.Snapshot(ctx, good.ID); c != "good" || seq != 1 {
				t.Errorf("the valid write: got snapshot %q at %d, want \"good\" at 1", c, seq)
			}
			if es, _ := db.EventsAfter(ctx, bad.ID, 0, 0); len(es) != 0 {
				t.Errorf("the invalid write: got %d events written, want 0", len(es))
			}
			got, _ := db.TurnByID(ctx, bad.ID)
			if got.Status != toolmark.TurnQueued {
				t.Errorf("the invalid write: got turn status %s, want queued", got.Status)
			}
			if c, seq, _ := db.Snapshot(ctx, bad.ID); c != "" || seq != 0 {
				t.Errorf("the invalid write: got snapshot %q at %d, want it untouched", c, seq)
			}
			if n := count(t, db, "select count(*) from tool_calls where turn_id = $1", bad.ID); n != 0 {
				t.Errorf("the invalid write: got %d tool calls written, want 0", n)
			}
			if n := count(t, db, "select count(*) from todos where turn_id = $1", bad.ID); n != 0 {
				t.Errorf("the invalid write: got todos written")
			}
		})
	}
}

// TestCommitLeaseLost commits writes for turns this owner does not hold
// (another owner's, a released one, an unknown one) or that are final,
// together with a turn it does hold: those are refused with ErrLeaseLost
// and get nothing written; the held one commits.
func TestCommitLeaseLost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	newTurn := func(leaseOwner string) toolmark.Turn {
		return mustTurnAs(t, db, leaseOwner, f.user.ID, mustConversation(t, db, f.user.ID).ID, "q")
	}
	mine := f.turn
	theirs := newTurn(newOwner("other"))
	released := newTurn(testOwner)
	if err := db.ReleaseLease(ctx, released.ID, testOwner); err != nil {
		t.Fatal(err)
	}
	done := newTurn(testOwner)
	mustFinish(t, db, done, toolmark.TurnCompleted, "", "the answer")
	// A lease that expired but that nobody took over is still held.
	expired := newTurn(testOwner)
	if err := db.AcquireLease(ctx, expired.ID, testOwner, time.Microsecond); err != nil {
		t.Fatal(err)
	}
	missing := toolmark.Turn{ID: "00000000-0000-0000-0000-000000000000", AssistantMessageID: "00000000-0000-0000-0000-000000000000"}

	var ws []store.TurnWrite
	for _, tu := range []toolmark.Turn{mine, theirs, released, done, expired, missing} {
		w := write(t, tu, lastSeq0(t, db, tu.ID),
			toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}},
			toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "mine"}})
		w.Started = true
		content := "mine"
		w.Content = &content
		w.ToolCalls = []toolmark.ToolCallRecord{{ID: "c1", Name: "x"}}
		w.Todos = &[]toolmark.Todo{{Text: "t", Status: toolmark.TodoPending}}
		ws = append(ws, w)
	}
	ws[1].Finish = &store.Finish{Status: toolmark.TurnFailed, Error: "stolen"}
	err := db.Commit(ctx, testOwner, ws)
	wantLeaseLost(t, "Commit", err, theirs.ID, released.ID, done.ID, missing.ID)
	for _, tu := range []toolmark.Turn{mine, expired} {
		got, _ := db.TurnByID(ctx, tu.ID)
		if got.Status != toolmark.TurnRunning || got.LastSeq != 2 {
			t.Errorf("held turn: got status %s seq %d, want running at 2", got.Status, got.LastSeq)
		}
		if c, _, _ := db.Snapshot(ctx, tu.ID); c != "mine" {
			t.Errorf("held turn: got content %q, want \"mine\"", c)
		}
	}
	for _, tu := range []toolmark.Turn{theirs, released} {
		got, _ := db.TurnByID(ctx, tu.ID)
		if got.Status != toolmark.TurnQueued || got.LastSeq != 0 {
			t.Errorf("turn not held: got status %s seq %d, want queued at 0", got.Status, got.LastSeq)
		}
		if c, seq, _ := db.Snapshot(ctx, tu.ID); c != "" || seq != 0 {
			t.Errorf("turn not held: got content %q at %d, want it untouched", c, seq)
		}
	}
	if got, _ := db.TurnByID(ctx, theirs.ID); got.LeaseOwner == testOwner {
		t.Errorf("the other owner's lease changed hands: %+v", got)
	}
	if got, _ := db.TurnByID(ctx, done.ID); got.Status != toolmark.TurnCompleted || got.LastSeq != 1 {
		t.Errorf("final turn: got status %s seq %d, want completed at 1", got.Status, got.LastSeq)
	}
	if c, seq, _ := db.Snapshot(ctx, done.ID); c != "the answer" || seq != 1 {
		t.Errorf("final turn: got content %q at %d, want it untouched", c, seq)
	}
	for _, id := range []string{theirs.ID, released.ID, done.ID} {
		if n := count(t, db, "select count(*) from tool_calls where turn_id = $1", id); n != 0 {
			t.Errorf("turn %s: got %d tool calls written, want 0", id, n)
		}
		if n := count(t, db, "select count(*) from todos where turn_id = $1", id); n != 0 {
			t.Errorf("turn %s: got todos written", id)
		}
	}
	if n := count(t, db, "select count(*) from events"); n != 2+2+1 {
		t.Errorf("got %d events, want 5 (two held turns and the final one)", n)
	}
}

// TestCommitWritesOnlyItsTurnsMessage commits writes whose MessageID is the
// assistant message of another turn the owner holds: a write is refused or
// committed for its own turn, and never changes another turn's message.
func TestCommitWritesOnlyItsTurnsMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	theirs := mustTurnAs(t, db, newOwner("other"), f.user.ID, mustConversation(t, db, f.user.ID).ID, "q")
	mine := mustTurn(t, db, f.user.ID, mustConversation(t, db, f.user.ID).ID, "q")
	for _, tu := range []toolmark.Turn{theirs, mine} {
		// Held by testOwner, nothing logged yet.
		victim := mustTurn(t, db, f.user.ID, mustConversation(t, db, f.user.ID).ID, "victim")
		w := write(t, tu, 0, toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "not yours"}})
		w.MessageID = victim.AssistantMessageID
		content := "not yours"
		w.Content = &content
		_ = db.Commit(ctx, testOwner, []store.TurnWrite{w})
		if c, seq, _ := db.Snapshot(ctx, victim.ID); c != "" || seq != 0 {
			t.Errorf("a write of turn %s (lease owner %s) set another turn's message to %q at seq %d, want it untouched",
				tu.ID, tu.LeaseOwner, c, seq)
		}
	}
}

// lastSeq0 is lastSeq, 0 for an unknown turn.
func lastSeq0(tb testing.TB, db *store.DB, turnID string) int64 {
	tb.Helper()
	tu, err := db.TurnByID(context.Background(), turnID)
	if err != nil {
		return 0
	}
	return tu.LastSeq
}

// TestCommitDuplicateSeq commits an event at a seq the turn already has:
// the whole Commit fails, nothing of it is written, and the error is
// transient (a sweep that won a race is seen on retry).
func TestCommitDuplicateSeq(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	other := mustTurn(t, db, f.user.ID, mustConversation(t, db, f.user.ID).ID, "q")
	text := func(s string) toolmark.Draft {
		return toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: s}}
	}
	mustCommit(t, db, f.turn, text("one"))

	valid := write(t, other, 0, text("other"))
	content := "other"
	valid.Content = &content
	valid.Started = true
	dup := write(t, f.turn, 0, text("one again"))
	twice := write(t, f.turn, 1, text("two"), text("two again"))
	twice.Events[1].Seq = 2
	for _, tt := range []struct {
		name string
		w    store.TurnWrite
	}{{"a seq already logged", dup}, {"a seq twice in one write", twice}} {
		t.Run(tt.name, func(t *testing.T) {
			err := db.Commit(ctx, testOwner, []store.TurnWrite{valid, tt.w})
			var refused *store.RefusedError
			if err == nil || errors.As(err, &refused) {
				t.Fatalf("Commit = %v, want an error that is not a refusal", err)
			}
			wantCode(t, "Commit", err, toolmark.ECONFLICT)
			if !store.Transient(err) {
				t.Errorf("Transient(%v) = false, want true", err)
			}
			if es, _ := db.EventsAfter(ctx, other.ID, 0, 0); len(es) != 0 {
				t.Errorf("the other turn got %d events written, want 0", len(es))
			}
			if c, seq, _ := db.Snapshot(ctx, other.ID); c != "" || seq != 0 {
				t.Errorf("the other turn got content %q at %d, want it untouched", c, seq)
			}
			if tu, _ := db.TurnByID(ctx, other.ID); tu.Status != toolmark.TurnQueued {
				t.Errorf("the other turn is %s, want queued", tu.Status)
			}
			if es, _ := db.EventsAfter(ctx, f.turn.ID, 0, 0); len(es) != 1 {
				t.Errorf("got %d events, want 1", len(es))
			}
		})
	}
	// The retry without the duplicate commits.
	mustCommitAs(t, db, testOwner, valid)

	// Two writers of the same seq at once: exactly one wins.
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			errs <- db.Commit(ctx, testOwner, []store.TurnWrite{write(t, f.turn, 1, text(fmt.Sprint("racer ", i)))})
		}()
	}
	wins := 0
	for range 8 {
		err := <-errs
		switch {
		case err == nil:
			wins++
		case !store.Transient(err):
			t.Errorf("losing racer: got %v, want a transient error", err)
		}
	}
	if wins != 1 {
		t.Errorf("got %d racers committing seq 2, want 1", wins)
	}
	if es, _ := db.EventsAfter(ctx, f.turn.ID, 0, 0); len(es) != 2 {
		t.Errorf("got %d events, want 2", len(es))
	}
}

// TestListenReconnects kills the listening connection's backend: Listen
// reconnects and notifications flow again.
func TestListenReconnects(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ch, err := f.db.Listen(ctx, store.ChannelEvents)
	if err != nil {
		t.Fatal(err)
	}
	n := count(t, f.db, `select count(pg_terminate_backend(pid)) from pg_stat_activity
		where datname = current_database() and query like 'listen %'`)
	if n != 1 {
		t.Fatalf("terminated %d listening backends, want 1", n)
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case got := <-ch:
			if !strings.HasPrefix(got.Payload, f.turn.ID+":") {
				t.Fatalf("got %+v", got)
			}
			return
		case <-tick.C:
			mustCommit(t, f.db, f.turn, toolmark.Draft{Type: toolmark.EventRoundStarted, Data: toolmark.RoundStartedData{Round: 1}})
		case <-ctx.Done():
			t.Fatal("no notification after the listening connection was killed")
		}
	}
}

// TestPruneManyTurns prunes more turns than one pruning transaction takes.
func TestPruneManyTurns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	mustFinish(t, db, f.turn, toolmark.TurnCompleted, "", "")
	const turns = 130
	for range turns {
		tu := mustTurn(t, db, f.user.ID, f.conv.ID, "q")
		w := finishWrite(t, tu, 1, toolmark.TurnCompleted, "", "a")
		w.Events = append(eventRows(t, 0, toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}}), w.Events...)
		w.Started = true
		mustCommitAs(t, db, testOwner, w)
	}
	n, err := db.PruneEvents(ctx, time.Now().Add(time.Hour))
	if err != nil || n != 2*turns+1 {
		t.Fatalf("PruneEvents = %d, %v; want %d", n, err, 2*turns+1)
	}
	if c := count(t, db, "select count(*) from turns where first_seq <> last_seq + 1"); c != 0 {
		t.Errorf("%d turns not marked pruned", c)
	}
	if c := count(t, db, "select count(*) from events"); c != 0 {
		t.Errorf("%d events left", c)
	}
}
