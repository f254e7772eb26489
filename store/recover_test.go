package store_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/runner"
	"github.com/toolmark/toolmark/store"
	"github.com/toolmark/toolmark/toolcallmarkup"
	"github.com/toolmark/toolmark/turnstate"
)

// TestSweepExpired crashes a runner mid-turn — its lease expires while its
// process still holds its liveness lock — and runs two sweepers at once:
// the turn is finalised exactly once, from the stored content plus the
// logged events, with every open tag and unfinished todo interrupted, and
// the log, the content, the tool-call rows and the todos agree.
func TestSweepExpired(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	crashed, alive := newOwner("crashed"), newOwner("alive")
	listenAs(t, db, crashed)
	listenAs(t, db, alive)
	conv := mustConversation(t, db, f.user.ID)
	crashedTurn := mustTurnAs(t, db, crashed, f.user.ID, conv.ID, "crash")
	if err := db.AcquireLease(ctx, crashedTurn.ID, crashed, time.Minute); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, db, crashedTurn)
	r.owner = crashed
	script(r, 7) // content saved halfway; c2 running, c3 pending, todos unfinished at the end
	lastLive := r.seq

	// A running turn with an unexpired lease is left alone.
	busy := mustTurnAs(t, db, alive, f.user.ID, mustConversation(t, db, f.user.ID).ID, "busy")
	busyRunner := newRunner(t, db, busy)
	busyRunner.owner = alive
	busyRunner.emit(toolmark.EventTurnStarted, toolmark.TurnStartedData{})
	busyRunner.start(toolcallmarkup.ToolCall{ID: "b1", Type: "search_documents"})

	now := time.Now().Add(2 * time.Minute) // the crashed replica's lease has expired
	var wg sync.WaitGroup
	results := make([][]string, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids, err := db.SweepExpired(ctx, now, "sweeper", true, nil, runner.Interrupt)
			if err != nil {
				t.Errorf("sweeper %d: %v", i, err)
			}
			results[i] = ids
		}()
	}
	wg.Wait()
	if got := slices.Concat(results...); len(got) != 1 || got[0] != crashedTurn.ID {
		t.Fatalf("sweepers finalised %v and %v, want %s exactly once", results[0], results[1], crashedTurn.ID)
	}
	if again, _ := db.SweepExpired(ctx, now, "sweeper", true, nil, runner.Interrupt); len(again) != 0 {
		t.Errorf("a third sweep finalised %v, want nothing", again)
	}

	tu, _ := db.TurnByID(ctx, crashedTurn.ID)
	if tu.Status != toolmark.TurnInterrupted || tu.Error != runner.Interrupted || tu.FinishedAt == nil || tu.LeaseOwner != "" {
		t.Errorf("got turn %+v, want interrupted, finished, without lease", tu)
	}
	events, err := db.EventsAfter(ctx, crashedTurn.ID, lastLive, 0)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	var interrupted []string
	for _, e := range events {
		types = append(types, string(e.Type))
		switch e.Type {
		case toolmark.EventToolCallError:
			var d toolmark.ToolCallData
			_ = json.Unmarshal(e.Data, &d)
			if d.Error != "interrupted" || !strings.Contains(d.Markup, `status="error"`) || d.StatusText == "" {
				t.Errorf("sweep event %d: got %s, want tool_call_error interrupted with a status line", e.Seq, e.Data)
			}
			interrupted = append(interrupted, d.ToolCallID)
		case toolmark.EventTodoUpdate:
			var d toolmark.TodoUpdateData
			_ = json.Unmarshal(e.Data, &d)
			want := []toolmark.Todo{{Text: "read", Status: toolmark.TodoDone}, {Text: "write", Status: toolmark.TodoInterrupted}, {Text: "check", Status: toolmark.TodoInterrupted}}
			if !slices.Equal(d.Todos, want) {
				t.Errorf("sweep todo_update: got %v, want %v", d.Todos, want)
			}
		}
	}
	if got := strings.Join(types, ","); got != "tool_call_error,tool_call_error,todo_update,turn_failed" {
		t.Errorf("got sweep events %s, want tool_call_error ×2, todo_update, turn_failed", got)
	}
	if strings.Join(interrupted, ",") != "c2,c3" {
		t.Errorf("got tool_call_error for %v, want c2,c3", interrupted)
	}
	last := events[len(events)-1]
	var end toolmark.TurnEndData
	_ = json.Unmarshal(last.Data, &end)
	if last.Type != toolmark.EventTurnFailed || end.Status != toolmark.TurnInterrupted || end.Code != "interrupted" {
		t.Errorf("got last event %s %s, want turn_failed interrupted", last.Type, last.Data)
	}
	if last.Seq != lastLive+int64(len(events)) || tu.LastSeq != last.Seq {
		t.Errorf("got last seq %d (turn %d), want %d: the sweep numbers after the log", last.Seq, tu.LastSeq, lastLive+int64(len(events)))
	}

	// The stored message: everything logged, every tag final, seq at the end.
	content, seq, _ := db.Snapshot(ctx, crashedTurn.ID)
	if seq != last.Seq {
		t.Errorf("got message seq %d, want %d", seq, last.Seq)
	}
	live := r.st
	for _, d := range live.CloseOpen(toolcallmarkup.StatusError, runner.Interrupted) {
		if err := live.Apply(d, now); err != nil {
			t.Fatal(err)
		}
	}
	if content != live.Content() {
		t.Errorf("stored content differs from the live content closed as interrupted\ngot:  %q\nwant: %q", content, live.Content())
	}
	for _, c := range toolcallmarkup.Parse(content) {
		if !c.Status.Final() {
			t.Errorf("tag %s still %s", c.ID, c.Status)
		}
	}
	ms, _ := db.ListMessages(ctx, f.user.ID, conv.ID)
	if ms[1].Status != toolmark.MessageInterrupted {
		t.Errorf("got message status %s, want interrupted", ms[1].Status)
	}
	// The whole log rebuilt from nothing gives the stored content, tool
	// calls and todos.
	all, _ := db.EventsAfter(ctx, crashedTurn.ID, 0, 0)
	rebuilt := turnstate.New()
	for _, e := range all {
		if err := rebuilt.ApplyEvent(e); err != nil {
			t.Fatal(err)
		}
	}
	if rebuilt.Content() != content {
		t.Errorf("the log rebuilds other content\ngot:  %q\nwant: %q", rebuilt.Content(), content)
	}
	if rebuilt.Status() != toolmark.TurnInterrupted {
		t.Errorf("the log ends the turn as %s, want interrupted", rebuilt.Status())
	}
	recs, _ := db.ToolCalls(ctx, crashedTurn.ID)
	want := map[string]string{"c1": "success", "c1.1": "error", "c2": "error", "c3": "error"}
	if len(recs) != len(want) {
		t.Errorf("got %d tool calls, want %d", len(recs), len(want))
	}
	for _, rec := range recs {
		c, ok := rebuilt.Call(rec.ID)
		if rec.Status != want[rec.ID] || !ok || string(c.Status) != rec.Status || rec.FinishedAt == nil {
			t.Errorf("tool call %s: got %s %q, want %s as the log says", rec.ID, rec.Status, rec.Error, want[rec.ID])
		}
		if (rec.ID == "c2" || rec.ID == "c3") && rec.Error != runner.Interrupted {
			t.Errorf("tool call %s: got error %q, want %q", rec.ID, rec.Error, runner.Interrupted)
		}
	}
	todos, _ := db.Todos(ctx, crashedTurn.ID)
	if !slices.Equal(todos, rebuilt.Todos()) || len(todos) != 3 || todos[2].Status != toolmark.TodoInterrupted {
		t.Errorf("got todos %v, the log says %v", todos, rebuilt.Todos())
	}

	// The crashed replica comes back: its lease is gone and it cannot log.
	held, _, err := db.RenewLeases(ctx, crashed, time.Minute, []string{crashedTurn.ID})
	if err != nil || len(held) != 0 {
		t.Errorf("RenewLeases after sweep = %v, %v; want nothing held", held, err)
	}
	late := write(t, crashedTurn, lastLive, toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "late"}})
	late.Events[0].Seq = last.Seq + 1
	wantLeaseLost(t, "Commit after sweep", db.Commit(ctx, crashed, []store.TurnWrite{late}), crashedTurn.ID)
	wantLeaseLost(t, "finishing after sweep", db.Commit(ctx, crashed, []store.TurnWrite{
		finishWrite(t, crashedTurn, last.Seq+1, toolmark.TurnCompleted, "", "late")}), crashedTurn.ID)

	if b, _ := db.TurnByID(ctx, busy.ID); b.Status != toolmark.TurnRunning || b.LeaseOwner != alive {
		t.Errorf("a turn with a live lease was swept: %+v", b)
	}
	if recs, _ := db.ToolCalls(ctx, busy.ID); len(recs) != 1 || recs[0].Status != "pending" {
		t.Errorf("a turn with a live lease had its tool calls changed: %+v", recs)
	}
}

// TestSweepManyTurns sweeps many running turns of a gone owner with several
// sweepers; its queued turns are left for AdoptQueued.
func TestSweepManyTurns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFixture(t).db
	u := mustUser(t, db, "erin")
	dead := newOwner("dead")
	const turns = 20
	var running, queued []string
	for i := range turns {
		tu := mustTurnAs(t, db, dead, u.ID, mustConversation(t, db, u.ID).ID, "q")
		ds := []toolmark.Draft{{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "partial"}}}
		if i%4 != 0 {
			ds = append([]toolmark.Draft{{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}}}, ds...)
			running = append(running, tu.ID)
		} else {
			queued = append(queued, tu.ID)
		}
		w := write(t, tu, 0, ds...)
		w.Started = i%4 != 0
		mustCommitAs(t, db, dead, w)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]int{}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids, err := db.SweepExpired(ctx, time.Now(), "sweeper", true, nil, runner.Interrupt)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			for _, id := range ids {
				seen[id]++
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(seen) != len(running) {
		t.Errorf("swept %d turns, want the %d running ones", len(seen), len(running))
	}
	for _, id := range running {
		if seen[id] != 1 {
			t.Errorf("turn %s swept %d times, want once", id, seen[id])
		}
	}
	if n := count(t, db, "select count(*) from events where type = $1 and seq = 3", store.EventTypeCode(toolmark.EventTurnFailed)); n != len(running) {
		t.Errorf("got %d turn_failed events at seq 3, want %d", n, len(running))
	}
	if n := count(t, db, "select count(*) from messages where role = 'assistant' and status = 'interrupted' and content = 'partial' and seq = 3"); n != len(running) {
		t.Errorf("got %d interrupted messages holding their logged text, want %d", n, len(running))
	}
	if n := count(t, db, "select count(*) from turns where id = any($1) and status = 'queued'", queued); n != len(queued) {
		t.Errorf("got %d queued turns left queued, want %d", n, len(queued))
	}
}

// TestSweepLiveness sweeps a running turn whose owner holds no liveness lock
// (it never called ListenAs, as a process that died) although its lease
// has not expired, and leaves alone the turn of an owner that holds its
// lock, until that owner's connection goes.
func TestSweepLiveness(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	gone, live := newOwner("gone"), newOwner("live")
	liveCtx, stopLive := context.WithCancel(ctx)
	defer stopLive()
	liveCh, err := db.ListenAs(liveCtx, live, store.ChannelEvents)
	if err != nil {
		t.Fatal(err)
	}
	start := func(owner string) toolmark.Turn {
		tu := mustTurnAs(t, db, owner, f.user.ID, mustConversation(t, db, f.user.ID).ID, "q")
		w := write(t, tu, 0, toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}})
		w.Started = true
		mustCommitAs(t, db, owner, w)
		return tu
	}
	goneTurn, liveTurn := start(gone), start(live)

	ids, err := db.SweepExpired(ctx, time.Now(), "sweeper", true, nil, runner.Interrupt)
	if err != nil || len(ids) != 1 || ids[0] != goneTurn.ID {
		t.Fatalf("SweepExpired = %v, %v; want only the gone owner's turn %s", ids, err, goneTurn.ID)
	}
	if tu, _ := db.TurnByID(ctx, liveTurn.ID); tu.Status != toolmark.TurnRunning || tu.LeaseOwner != live {
		t.Errorf("the live owner's turn: got %+v, want running and leased", tu)
	}

	// The live owner's connection ends: its turn is swept without waiting
	// for the lease (an hour) to expire.
	stopLive()
	for range liveCh {
	}
	poll, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		ids, err := db.SweepExpired(ctx, time.Now(), "sweeper", true, nil, runner.Interrupt)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) == 1 && ids[0] == liveTurn.ID {
			break
		}
		if len(ids) != 0 {
			t.Fatalf("SweepExpired = %v, want %s", ids, liveTurn.ID)
		}
		select {
		case <-poll.Done():
			t.Fatal("the turn of an owner whose connection closed was never swept")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestSweepLivenessIsPerDatabase holds an owner's liveness lock in another
// database of the same server: that does not make the owner alive in this
// one, where its running turn is swept.
func TestSweepLivenessIsPerDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	elsewhere := pgtest.New(t)
	owner := newOwner("elsewhere")
	listenAs(t, elsewhere, owner)
	tu := mustTurnAs(t, f.db, owner, f.user.ID, mustConversation(t, f.db, f.user.ID).ID, "q")
	w := write(t, tu, 0, toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}})
	w.Started = true
	mustCommitAs(t, f.db, owner, w)
	ids, err := f.db.SweepExpired(ctx, time.Now(), "sweeper", true, nil, runner.Interrupt)
	if err != nil || len(ids) != 1 || ids[0] != tu.ID {
		t.Errorf("SweepExpired = %v, %v; want [%s]: a lock held in another database does not keep the owner alive here", ids, err, tu.ID)
	}
}

// TestAdoptQueued adopts the queued turns of gone owners — no lease owner,
// an owner holding no liveness lock, an expired lease — oldest first, and
// leaves a live owner's queued turn, running turns and final turns alone.
func TestAdoptQueued(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	u := mustUser(t, db, "hana")
	gone, live, adopter := newOwner("gone"), newOwner("live"), newOwner("adopter")
	listenAs(t, db, live)
	listenAs(t, db, adopter)
	newTurn := func(owner, text string) toolmark.Turn {
		return mustTurnAs(t, db, owner, u.ID, mustConversation(t, db, u.ID).ID, text)
	}
	unleased := newTurn("", "no owner")
	ofGone := newTurn(gone, "gone owner")
	expired := newTurn(live, "expired lease")
	if err := db.AcquireLease(ctx, expired.ID, live, time.Microsecond); err != nil {
		t.Fatal(err)
	}
	ofLive := newTurn(live, "live owner")
	runningOfGone := newTurn(gone, "running")
	w := write(t, runningOfGone, 0, toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}})
	w.Started = true
	mustCommitAs(t, db, gone, w)
	final := newTurn(testOwner, "final")
	mustFinish(t, db, final, toolmark.TurnCompleted, "", "")

	first, err := db.Adopt(ctx, adopter, time.Hour, 1, true)
	if err != nil || len(first) != 1 || first[0].Turn.ID != unleased.ID {
		t.Fatalf("AdoptQueued(limit 1) = %+v, %v; want the oldest, %s", first, err, unleased.ID)
	}
	rest, err := db.Adopt(ctx, adopter, time.Hour, 10, true)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, a := range append(first, rest...) {
		got = append(got, a.Turn.ID)
		if a.Turn.LeaseOwner != adopter || a.Turn.LeaseExpiresAt == nil || a.Turn.Status != toolmark.TurnQueued || a.OwnerID != u.ID {
			t.Errorf("adopted %+v, want it queued, leased by the adopter, of user %s", a, u.ID)
		}
	}
	if want := []string{unleased.ID, ofGone.ID, expired.ID}; !slices.Equal(got, want) {
		t.Errorf("adopted %v, want %v (oldest first)", got, want)
	}
	texts := map[string]string{}
	for _, a := range append(first, rest...) {
		texts[a.Turn.ID] = a.UserText
	}
	if texts[unleased.ID] != "no owner" || texts[ofGone.ID] != "gone owner" || texts[expired.ID] != "expired lease" {
		t.Errorf("got user texts %v", texts)
	}
	for _, tu := range []toolmark.Turn{ofLive, runningOfGone, final} {
		if got, _ := db.TurnByID(ctx, tu.ID); got.LeaseOwner == adopter {
			t.Errorf("turn %+v was adopted", got)
		}
	}
	// The adopter is alive: nobody adopts its turns again.
	if again, err := db.Adopt(ctx, newOwner("another"), time.Hour, 10, true); err != nil || len(again) != 0 {
		t.Errorf("a second adopter got %+v, %v; want nothing", again, err)
	}
}

// TestSweepTrustsLivenessOnlyWhenAsked: without liveness (a sweeper that
// just got its database back), a turn whose owner holds no lock is not
// swept while its lease runs, and a sweeper never takes its own turns for
// gone.
func TestSweepTrustsLivenessOnlyWhenAsked(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	owner := newOwner("quiet")
	tr := runningTurnAs(t, f, owner)
	if ids, err := f.db.SweepExpired(ctx, time.Now(), "sweeper", false, nil, runner.Interrupt); err != nil || len(ids) != 0 {
		t.Fatalf("without liveness: swept %v, %v", ids, err)
	}
	if ids, err := f.db.SweepExpired(ctx, time.Now(), owner, true, nil, runner.Interrupt); err != nil || len(ids) != 0 {
		t.Fatalf("its own turn: swept %v, %v", ids, err)
	}
	if ids, err := f.db.SweepExpired(ctx, time.Now(), "sweeper", true, nil, runner.Interrupt); err != nil || len(ids) != 1 || ids[0] != tr.ID {
		t.Fatalf("with liveness: swept %v, %v; want the turn", ids, err)
	}
}

// runningTurnAs is a turn of a new conversation that owner started.
func runningTurnAs(t *testing.T, f fixture, owner string) toolmark.Turn {
	t.Helper()
	tr := mustTurnAs(t, f.db, owner, f.user.ID, mustConversation(t, f.db, f.user.ID).ID, "hi")
	w := write(t, tr, 1, toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}})
	w.Started = true
	mustCommitAs(t, f.db, owner, w)
	return tr
}

// TestSweepLeavesTheCallersRunningTurns: a replica whose turn's lease ran
// out while it still runs it (a slow commit) does not sweep it beside its
// own group commit; once its job is gone, it does.
func TestSweepLeavesTheCallersRunningTurns(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	owner := newOwner("slow")
	tr := runningTurnAs(t, f, owner)
	expired := time.Now().Add(2 * time.Hour)
	if ids, err := f.db.SweepExpired(ctx, expired, owner, true, []string{"other", tr.ID}, runner.Interrupt); err != nil || len(ids) != 0 {
		t.Fatalf("a turn its owner still runs: swept %v, %v", ids, err)
	}
	if ids, err := f.db.SweepExpired(ctx, expired, owner, true, []string{"other"}, runner.Interrupt); err != nil || len(ids) != 1 || ids[0] != tr.ID {
		t.Fatalf("its own turn whose job is gone: swept %v, %v; want the turn", ids, err)
	}
}

func TestRecovering(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	owner := newOwner("alive")
	if _, err := f.db.ListenAs(ctx, owner, store.ChannelEvents); err != nil {
		t.Fatal(err)
	}
	alive := mustTurnAs(t, f.db, owner, f.user.ID, mustConversation(t, f.db, f.user.ID).ID, "hi")
	gone := mustTurnAs(t, f.db, newOwner("dead"), f.user.ID, mustConversation(t, f.db, f.user.ID).ID, "hi")
	for _, tt := range []struct {
		turn toolmark.Turn
		want bool
	}{{alive, false}, {gone, true}} {
		got, err := f.db.Recovering(ctx, tt.turn.ID)
		if err != nil || got != tt.want {
			t.Errorf("Recovering(%s) = %v, %v; want %v", tt.turn.ID, got, err, tt.want)
		}
	}
	mustFinish(t, f.db, f.turn, toolmark.TurnCompleted, "", "done")
	if got, err := f.db.Recovering(ctx, f.turn.ID); err != nil || got {
		t.Errorf("a finished turn: %v, %v", got, err)
	}
}
