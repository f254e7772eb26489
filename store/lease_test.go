package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/store"
)

// listenAs takes owner's liveness lock (ListenAs) until the test ends.
func listenAs(tb testing.TB, db *store.DB, owner string) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := db.ListenAs(ctx, owner, store.ChannelEvents)
	if err != nil {
		cancel()
		tb.Fatalf("ListenAs(%s): %v", owner, err)
	}
	tb.Cleanup(func() {
		cancel()
		for range ch {
		}
	})
}

// TestRenewLeases renews the leases an owner holds among the ids it names,
// reports which of them have a cancel request, and leaves other owners'
// turns, final turns and its own turns it did not name alone.
func TestRenewLeases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	a, b := newOwner("a"), newOwner("b")
	newTurn := func(owner string) toolmark.Turn {
		return mustTurnAs(t, db, owner, f.user.ID, mustConversation(t, db, f.user.ID).ID, "q")
	}
	plain, cancelled, theirs, unnamed := newTurn(a), newTurn(a), newTurn(b), newTurn(a)
	final := newTurn(testOwner)
	mustFinish(t, db, final, toolmark.TurnCompleted, "", "")
	if _, err := db.RequestCancel(ctx, f.user.ID, cancelled.ID); err != nil {
		t.Fatal(err)
	}
	for _, tu := range []toolmark.Turn{plain, cancelled, unnamed} {
		if err := db.AcquireLease(ctx, tu.ID, a, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	before := map[string]*time.Time{}
	for _, tu := range []toolmark.Turn{plain, cancelled, theirs, unnamed} {
		got, _ := db.TurnByID(ctx, tu.ID)
		before[tu.ID] = got.LeaseExpiresAt
	}

	held, cancel, err := db.RenewLeases(ctx, a, 24*time.Hour, []string{plain.ID, cancelled.ID, theirs.ID, final.ID, "00000000-0000-0000-0000-000000000000"})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(held)
	if want := []string{plain.ID, cancelled.ID}; !slices.Equal(held, sorted(want)) {
		t.Errorf("got held %v, want %v", held, sorted(want))
	}
	if !slices.Equal(cancel, []string{cancelled.ID}) {
		t.Errorf("got cancel %v, want [%s]", cancel, cancelled.ID)
	}
	for _, tu := range []toolmark.Turn{plain, cancelled} {
		got, _ := db.TurnByID(ctx, tu.ID)
		if got.LeaseOwner != a || !got.LeaseExpiresAt.After(before[tu.ID].Add(time.Hour)) {
			t.Errorf("renewed turn: got lease %s until %v, want a until about a day from now (was %v)", got.LeaseOwner, got.LeaseExpiresAt, before[tu.ID])
		}
	}
	for _, tu := range []toolmark.Turn{theirs, unnamed} {
		got, _ := db.TurnByID(ctx, tu.ID)
		if !got.LeaseExpiresAt.Equal(*before[tu.ID]) {
			t.Errorf("turn %s leased by %s: lease moved from %v to %v, want it left alone", tu.ID, got.LeaseOwner, before[tu.ID], got.LeaseExpiresAt)
		}
	}
	if got, _ := db.TurnByID(ctx, theirs.ID); got.LeaseOwner != b {
		t.Errorf("got lease owner %s, want %s", got.LeaseOwner, b)
	}
	if held, cancel, err := db.RenewLeases(ctx, a, time.Minute, nil); err != nil || len(held)+len(cancel) != 0 {
		t.Errorf("RenewLeases(no ids) = %v, %v, %v; want nothing", held, cancel, err)
	}
	_, _, err = db.RenewLeases(ctx, a, 0, []string{plain.ID})
	wantCode(t, "RenewLeases(ttl 0)", err, toolmark.EINVALID)
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestCreateTurnQueued creates a turn with its lease and its turn_queued
// event in one call; the runner then numbers its events after it.
func TestCreateTurnQueued(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	conv := mustConversation(t, db, f.user.ID)
	owner := newOwner("runner")
	at := time.Now().UTC().Truncate(time.Microsecond)
	nt := store.NewTurn{OwnerID: f.user.ID, ConversationID: conv.ID, Input: toolmark.TurnInput{Content: "hi"}, IdempotencyKey: "k",
		LeaseOwner: owner, LeaseTTL: time.Hour,
		Queued: &toolmark.Event{Type: toolmark.EventTurnQueued, Data: mustJSON(t, toolmark.TurnQueuedData{Position: 2}), Time: at}}
	tu, created, err := db.CreateTurn(ctx, nt)
	if err != nil || !created {
		t.Fatalf("CreateTurn = %v, created %v", err, created)
	}
	if tu.LastSeq != 1 || tu.LeaseOwner != owner || tu.LeaseExpiresAt == nil || tu.Status != toolmark.TurnQueued {
		t.Errorf("got turn %+v, want queued at seq 1 leased by %s", tu, owner)
	}
	es, err := db.EventsAfter(ctx, tu.ID, 0, 0)
	if err != nil || len(es) != 1 {
		t.Fatalf("EventsAfter = %v, %v; want the turn_queued event", es, err)
	}
	if e := es[0]; e.Seq != 1 || e.Type != toolmark.EventTurnQueued || string(e.Data) != `{"position":2}` || !e.Time.Equal(at) {
		t.Errorf("got event %+v, want turn_queued at seq 1 with its data and time", e)
	}
	if got, _ := db.TurnByID(ctx, tu.ID); got.LastSeq != 1 {
		t.Errorf("TurnByID: got last seq %d, want 1", got.LastSeq)
	}
	// The same request again gets the same turn and logs nothing more.
	again, created, err := db.CreateTurn(ctx, nt)
	if err != nil || created || again.ID != tu.ID {
		t.Errorf("CreateTurn again = %s, created %v, %v; want %s", again.ID, created, err, tu.ID)
	}
	if n := storedEvents(t, db, "join turns t on t.num = e.turn where t.id = $1", tu.ID); n != 1 {
		t.Errorf("got %d events, want 1", n)
	}
	// The runner numbers after it; seq 1 is taken.
	err = db.Commit(ctx, owner, []store.TurnWrite{write(t, tu, 0, toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}})})
	wantCode(t, "Commit at seq 1", err, toolmark.ECONFLICT)
	w := write(t, tu, 1, toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}})
	w.Started = true
	mustCommitAs(t, db, owner, w)
	if got, _ := db.TurnByID(ctx, tu.ID); got.Status != toolmark.TurnRunning || got.LastSeq != 2 {
		t.Errorf("got turn %+v, want running at seq 2", got)
	}
	// Without a lease owner there is no lease.
	other, _, err := db.CreateTurn(ctx, store.NewTurn{OwnerID: f.user.ID, ConversationID: mustConversation(t, db, f.user.ID).ID, Input: toolmark.TurnInput{Content: "x"}})
	if err != nil || other.LeaseOwner != "" || other.LeaseExpiresAt != nil || other.LastSeq != 0 {
		t.Errorf("CreateTurn without lease = %+v, %v; want no lease, seq 0", other, err)
	}
}

// TestTurnContext loads a conversation's summary and the history after it,
// with the tool calls of each turn, in one call; it agrees with
// ConversationSummary, ConversationHistory and HistoryAfter.
func TestTurnContext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	var done []toolmark.Turn
	tu := f.turn
	for i := range 3 {
		w := finishWrite(t, tu, 0, toolmark.TurnCompleted, "", fmt.Sprint("answer ", i))
		w.ToolCalls = []toolmark.ToolCallRecord{{ID: fmt.Sprint("c", i), Name: "search_documents", Status: "success"}}
		mustCommitAs(t, db, testOwner, w)
		done = append(done, tu)
		tu = mustTurn(t, db, f.user.ID, f.conv.ID, fmt.Sprint("question ", i+1))
	}
	current := tu
	tc, err := db.TurnContext(ctx, f.conv.ID, current.ID)
	if err != nil {
		t.Fatal(err)
	}
	if tc.Summary != "" || len(tc.History) != 3 {
		t.Fatalf("TurnContext without summary = %+v; want three turns", tc)
	}
	if err := db.SetConversationSummaryThrough(ctx, f.conv.ID, "they said hello", done[0].ID); err != nil {
		t.Fatal(err)
	}
	tc, err = db.TurnContext(ctx, f.conv.ID, current.ID)
	if err != nil {
		t.Fatal(err)
	}
	if tc.Summary != "they said hello" || len(tc.History) != 2 {
		t.Fatalf("TurnContext = %+v; want the summary and the two turns after it", tc)
	}
	for i, h := range tc.History {
		want := done[i+1]
		if h.TurnID != want.ID || h.Status != toolmark.TurnCompleted || h.UserText != fmt.Sprint("question ", i+1) ||
			h.AssistantContent != fmt.Sprint("answer ", i+1) || len(h.ToolCalls) != 1 || h.ToolCalls[0].ID != fmt.Sprint("c", i+1) {
			t.Errorf("history %d: got %+v", i, h)
		}
	}
	summary, through, _ := db.ConversationSummary(ctx, f.conv.ID)
	hist, _ := db.ConversationHistory(ctx, f.conv.ID, current.ID)
	if after := store.HistoryAfter(hist, through); summary != tc.Summary || fmt.Sprint(after) != fmt.Sprint(tc.History) {
		t.Errorf("TurnContext disagrees with ConversationSummary and ConversationHistory:\n%+v\n%+v", tc.History, after)
	}
	// Before the second turn: only the first, which the summary covers.
	if tc, err := db.TurnContext(ctx, f.conv.ID, done[1].ID); err != nil || len(tc.History) != 0 {
		t.Errorf("TurnContext(second turn) = %+v, %v; want no history", tc, err)
	}
	_, err = db.TurnContext(ctx, "00000000-0000-0000-0000-000000000000", current.ID)
	wantCode(t, "TurnContext(unknown conversation)", err, toolmark.ENOTFOUND)
	_, err = db.TurnContext(ctx, f.conv.ID, "\xff")
	wantCode(t, "TurnContext(malformed turn)", err, toolmark.ENOTFOUND)
}

// TestRenewLeasesWhileStarting: renewing the leases of many turns while a
// group commit starts them holds every one of them.
func TestRenewLeasesWhileStarting(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	u := mustUser(t, db, "alice")
	const owner, n = "renewer", 300
	var in []store.NewTurn
	for range n {
		c := mustConversation(t, db, u.ID)
		in = append(in, store.NewTurn{OwnerID: u.ID, ConversationID: c.ID, Input: toolmark.TurnInput{Content: "hi"}, LeaseOwner: owner, LeaseTTL: time.Minute,
			Queued: &toolmark.Event{Type: toolmark.EventTurnQueued, Data: []byte(`{}`), Time: time.Now()}})
	}
	var ids []string
	var turns []toolmark.Turn
	for _, r := range db.CreateTurns(ctx, in) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		ids, turns = append(ids, r.Turn.ID), append(turns, r.Turn)
	}
	done := make(chan error, 1)
	go func() {
		for i := 0; i < n; i += 10 {
			var ws []store.TurnWrite
			for _, tr := range turns[i : i+10] {
				ws = append(ws, store.TurnWrite{TurnID: tr.ID, MessageID: tr.AssistantMessageID, Started: true,
					Events: []toolmark.Event{{Seq: 2, Type: toolmark.EventTurnStarted, Data: []byte(`{}`), Time: time.Now()}}})
			}
			if err := db.Commit(ctx, owner, ws); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for round := 0; ; round++ {
		held, _, err := db.RenewLeases(ctx, owner, time.Minute, ids)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if len(held) != n {
			t.Fatalf("round %d: %d of %d leases held", round, len(held), n)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			return
		default:
		}
	}
}

// TestRenewLeasesWithThePoolBusy renews a lease while requests hold every
// connection of the pool: the renewal does not wait for them.
func TestRenewLeasesWithThePoolBusy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, store.WithMaxConns(2))
	db := f.db
	a := newOwner("a")
	tu := mustTurnAs(t, db, a, f.user.ID, mustConversation(t, db, f.user.ID).ID, "q")
	pgtest.HoldPool(t, db)
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	held, _, err := db.RenewLeases(short, a, time.Minute, []string{tu.ID})
	if err != nil || len(held) != 1 {
		t.Fatalf("RenewLeases with the pool busy = %v, %v; want the turn held", held, err)
	}
}

// TestOtherReplicasWithThePoolBusy checks that a replica counts its peers
// while requests hold every connection of the pool.
func TestOtherReplicasWithThePoolBusy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, store.WithMaxConns(2))
	db := f.db
	pgtest.HoldPool(t, db)
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if n, err := db.OtherReplicas(short, "a"); err != nil || n != 0 {
		t.Fatalf("OtherReplicas with the pool busy = %d, %v; want 0, nil", n, err)
	}
}
