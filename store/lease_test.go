package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// TestSweepExpired crashes a runner mid-turn (its lease expires) and runs
// two sweepers at once: the turn is finalised exactly once, from the
// snapshot plus the logged events, with every open tag interrupted.
func TestSweepExpired(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	if err := db.AcquireLease(ctx, f.turn.ID, "crashed-replica", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := db.MarkTurnRunning(ctx, f.turn.ID); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, db, f.turn)
	script(r, 6) // snapshot saved halfway; c2 running, c3 pending afterwards
	for _, id := range []string{"c1", "c1.1", "c2", "c3"} {
		tc, _ := r.doc.Get(id)
		if err := db.UpsertToolCall(ctx, toolmark.ToolCallRecord{TurnID: f.turn.ID, ID: id, ParentID: tc.ParentID, Name: tc.Type, Status: string(tc.Status)}); err != nil {
			t.Fatal(err)
		}
	}
	lastLive := r.seq

	// An unexpired lease and a finished turn are left alone.
	busy := mustTurn(t, db, f.user.ID, mustConversation(t, db, f.user.ID).ID, "busy")
	if err := db.AcquireLease(ctx, busy.ID, "alive-replica", time.Hour); err != nil {
		t.Fatal(err)
	}

	now := time.Now().Add(2 * time.Minute) // the crashed replica's lease has expired
	var wg sync.WaitGroup
	results := make([][]string, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids, err := db.SweepExpired(ctx, now)
			if err != nil {
				t.Errorf("sweeper %d: %v", i, err)
			}
			results[i] = ids
		}()
	}
	wg.Wait()
	if got := len(results[0]) + len(results[1]); got != 1 {
		t.Fatalf("sweepers finalised %v and %v, want the turn exactly once", results[0], results[1])
	}
	if again, _ := db.SweepExpired(ctx, now); len(again) != 0 {
		t.Errorf("a third sweep finalised %v, want nothing", again)
	}

	tu, _ := db.TurnByID(ctx, f.turn.ID)
	if tu.Status != toolmark.TurnInterrupted || tu.Error != "interrupted" || tu.FinishedAt == nil || tu.LeaseOwner != "" {
		t.Errorf("got turn %+v, want interrupted, finished, without lease", tu)
	}
	events, err := db.EventsAfter(ctx, f.turn.ID, lastLive, 0)
	if err != nil {
		t.Fatal(err)
	}
	var interrupted []string
	for i, e := range events[:len(events)-1] {
		var d toolmark.ToolCallData
		_ = json.Unmarshal(e.Data, &d)
		if e.Type != toolmark.EventToolCallError || d.Error != "interrupted" || !strings.Contains(d.Markup, `status="error"`) {
			t.Errorf("sweep event %d: got %s %s, want tool_call_error interrupted", i, e.Type, e.Data)
		}
		interrupted = append(interrupted, d.ToolCallID)
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
	if n := count(t, db, "select count(*) from events where turn_id = $1 and type = 'turn_failed'", f.turn.ID); n != 1 {
		t.Errorf("got %d turn_failed events, want 1", n)
	}

	// The stored message: everything logged, every tag final, seq at the end.
	content, seq, _ := db.Snapshot(ctx, f.turn.ID)
	if seq != last.Seq {
		t.Errorf("got message seq %d, want %d", seq, last.Seq)
	}
	live := r.doc
	live.Finalize(toolcallmarkup.StatusError, "interrupted")
	if content != live.String() {
		t.Errorf("rebuilt content differs\ngot:  %q\nwant: %q", content, live.String())
	}
	for _, c := range toolcallmarkup.Parse(content) {
		if !c.Status.Final() {
			t.Errorf("tag %s still %s", c.ID, c.Status)
		}
	}
	ms, _ := db.ListMessages(ctx, f.user.ID, f.conv.ID)
	if ms[1].Status != toolmark.MessageInterrupted {
		t.Errorf("got message status %s, want interrupted", ms[1].Status)
	}
	// The whole log replayed from nothing gives the stored content too.
	all, _ := db.EventsAfter(ctx, f.turn.ID, 0, 0)
	if rebuilt, err := store.Replay("", all); err != nil || rebuilt != content {
		t.Errorf("replaying the whole log: %v\ngot:  %q\nwant: %q", err, rebuilt, content)
	}
	recs, _ := db.ToolCalls(ctx, f.turn.ID)
	for _, rec := range recs {
		want := map[string]string{"c1": "success", "c1.1": "error", "c2": "error", "c3": "error"}[rec.ID]
		if rec.Status != want || (rec.ID >= "c2" && (rec.Error != "interrupted" || rec.FinishedAt == nil)) {
			t.Errorf("tool call %s: got %s %q, want %s", rec.ID, rec.Status, rec.Error, want)
		}
	}

	// The crashed replica comes back: its lease is gone and it cannot log.
	wantCode(t, "RenewLease after sweep", db.RenewLease(ctx, f.turn.ID, "crashed-replica", time.Minute), toolmark.ECONFLICT)
	_, err = db.AppendEvents(ctx, f.turn.ID, f.turn.AssistantMessageID, []store.EventInput{{Type: toolmark.EventTextDelta}})
	wantCode(t, "AppendEvents after sweep", err, toolmark.ECONFLICT)
	wantCode(t, "FinishTurn after sweep", db.FinishTurn(ctx, f.turn.ID, toolmark.TurnCompleted, "", "late", 99), toolmark.ECONFLICT)

	if b, _ := db.TurnByID(ctx, busy.ID); b.Status != toolmark.TurnQueued {
		t.Errorf("a turn with a live lease was swept: %+v", b)
	}
}

// TestSweepManyTurns sweeps many expired turns with several sweepers.
func TestSweepManyTurns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFixture(t).db
	u := mustUser(t, db, "erin")
	const turns = 20
	for i := range turns {
		tu := mustTurn(t, db, u.ID, mustConversation(t, db, u.ID).ID, "q")
		if err := db.AcquireLease(ctx, tu.ID, "dead", time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			_ = db.MarkTurnRunning(ctx, tu.ID)
		}
		mustAppend(t, db, tu, store.EventInput{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "partial"}})
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]int{}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids, err := db.SweepExpired(ctx, time.Now().Add(time.Second))
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
	if len(seen) != turns {
		t.Errorf("swept %d turns, want %d", len(seen), turns)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("turn %s swept %d times", id, n)
		}
	}
	if n := count(t, db, "select count(*) from events where type = 'turn_failed'"); n != turns {
		t.Errorf("got %d turn_failed events, want %d", n, turns)
	}
	if n := count(t, db, "select count(*) from messages where role = 'assistant' and status = 'interrupted' and content = 'partial' and seq = 2"); n != turns {
		t.Errorf("got %d interrupted messages holding their logged text, want %d", n, turns)
	}
}
