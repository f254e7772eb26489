package store_test

import (
	"context"
	"errors"
	"fmt"
	"math"
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
				select e.xmin::text as x from events e join turns t on t.num = e.turn where (t.id, e.seq) in (select * from unnest($1::text[], $2::bigint[]))
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
	// A cursor past any seq a turn can have (seqs are stored as integers; a
	// cursor is any int64) reads nothing.
	for _, after := range []int64{1 << 31, 1 << 40, math.MaxInt64} {
		if es, err := db.EventsAfter(ctx, tus[0].ID, after, 0); err != nil || len(es) != 0 {
			t.Errorf("EventsAfter(%d) = %d events, %v; want none", after, len(es), err)
		}
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
	if n := storedEvents(t, db, ""); n != owners*turns*rounds*2 {
		t.Errorf("got %d events, want %d", n, owners*turns*rounds*2)
	}
	if n := count(t, db, "select count(*) from (select turn from events e group by turn having max(seq) <> sum("+store.EventsInRow+")) gaps"); n != 0 {
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
		w.Events = append(numbered(t, 0, toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}}), w.Events...)
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

// TestEventsOfOneWriteShareARow: the events of a turn that one commit
// writes with seqs that follow each other are one row of the log, and read
// back one by one, each exactly as written (type, data, time to the
// microsecond), from any cursor, even one inside the row, and cut at the
// limit inside a row.
func TestEventsOfOneWriteShareARow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	w := write(t, f.turn, 0,
		toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}},
		toolmark.Draft{Type: toolmark.EventRoundStarted, Data: toolmark.RoundStartedData{Round: 1}},
		toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: `"<ToolCall>" ]],[[`}},
		toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "é"}},
	)
	for i := range w.Events {
		w.Events[i].Time = w.Events[i].Time.Add(time.Duration(i*1234567) * time.Microsecond) // 0, 1.23 s, …
	}
	w.Started = true
	// A seq that does not follow starts a row of its own.
	gap := numbered(t, 5, toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "after a gap"}})
	w.Events = append(w.Events, gap...)
	mustCommitAs(t, db, testOwner, w)
	alone := write(t, f.turn, 6, toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "alone"}})
	mustCommitAs(t, db, testOwner, alone)
	want := append(w.Events, alone.Events...)

	if n := count(t, db, "select count(*) from events e join turns t on t.num = e.turn where t.id = $1", f.turn.ID); n != 3 {
		t.Errorf("got %d rows for a write of 4+1 events and one of 1, want 3", n)
	}
	if n := storedEvents(t, db, "join turns t on t.num = e.turn where t.id = $1", f.turn.ID); n != len(want) {
		t.Errorf("the rows hold %d events, want %d", n, len(want))
	}
	for _, after := range []int64{0, 1, 2, 3, 4, 5, 6, 7} {
		for _, limit := range []int{0, 1, 2, 3} {
			got, err := db.EventsAfter(ctx, f.turn.ID, after, limit)
			if err != nil {
				t.Fatalf("EventsAfter(%d, %d): %v", after, limit, err)
			}
			var exp []toolmark.Event
			for _, e := range want {
				if e.Seq > after && (limit == 0 || len(exp) < limit) {
					exp = append(exp, e)
				}
			}
			if len(got) != len(exp) {
				t.Fatalf("EventsAfter(%d, %d): got %d events, want %d", after, limit, len(got), len(exp))
			}
			for i, g := range got {
				e := exp[i]
				if g.Seq != e.Seq || g.Type != e.Type || string(g.Data) != string(e.Data) || !g.Time.Equal(e.Time) ||
					g.TurnID != f.turn.ID || g.MessageID != f.turn.AssistantMessageID {
					t.Errorf("EventsAfter(%d, %d)[%d] = %+v, want %+v", after, limit, i, g, e)
				}
			}
		}
	}
}
