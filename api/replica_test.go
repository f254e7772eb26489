package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/internal/harness/testserver"
	"github.com/toolmark/toolmark/store"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// TestReplicas runs two servers on one database: a turn started on one is
// followed on the other (through LISTEN/NOTIFY) and cancelled from it.
func TestReplicas(t *testing.T) {
	a := testserver.Start(t, testserver.Options{DemoDelay: 10 * time.Millisecond})
	b := testserver.Start(t, testserver.Options{DemoDelay: 10 * time.Millisecond, DB: a.DB})
	ca, cb := newClient(t, a.URL, ""), newClient(t, b.URL, "")

	// Followed elsewhere: replica b streams a turn that runs on a.
	turn := ca.postTurn(ca.newConversation(), twoToolQuestion)
	onB := cb.allEvents(turn.ID, -1)
	if last := onB[len(onB)-1]; last.Type != toolmark.EventTurnCompleted {
		t.Fatalf("followed on the other replica: ended with %s", last.Type)
	}
	if onA := ca.allEvents(turn.ID, -1); !eventsEqual(onA, onB) {
		t.Fatalf("the replicas serve different streams")
	}
	checkStream(t, a, onB)

	// Cancelled elsewhere: replica b cancels a turn that runs on a.
	turn = ca.postTurn(ca.newConversation(), twoToolQuestion)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp := ca.stream(ctx, turn.ID, -1)
	defer resp.Body.Close()
	var evs []toolmark.Event
	sent := false
	_, _ = readFrames(resp.Body, func(f frame) bool {
		if f.Data == "" {
			return true
		}
		e := mustEvent(t, f)
		evs = append(evs, e)
		if e.Type == toolmark.EventRoundStarted && !sent {
			sent = true
			cb.mustJSON("POST", "/api/turns/"+turn.ID+"/cancel", "", http.StatusAccepted, nil)
		}
		return !e.Type.Terminal()
	})
	if last := evs[len(evs)-1]; last.Type != toolmark.EventTurnCancelled {
		t.Fatalf("cancelled from the other replica: ended with %s", last.Type)
	}
	checkStream(t, a, evs)
}

// TestQueue checks --max-turns: with one slot, a second turn waits with its
// queue position and runs once the first is done.
func TestQueue(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 10 * time.Millisecond, MaxTurns: 1})
	c := newClient(t, srv.URL, "")
	first := c.postTurn(c.newConversation(), twoToolQuestion)
	second := c.postTurn(c.newConversation(), twoToolQuestion)
	evs := c.allEvents(second.ID, -1)
	var q toolmark.TurnQueuedData
	if evs[0].Type != toolmark.EventTurnQueued || json.Unmarshal(evs[0].Data, &q) != nil {
		t.Fatalf("first event %s", evs[0].Type)
	}
	if q.Position != 1 {
		t.Errorf("second turn's queue position: got %d, want 1", q.Position)
	}
	if evs[len(evs)-1].Type != toolmark.EventTurnCompleted {
		t.Fatalf("second turn ended with %s", evs[len(evs)-1].Type)
	}
	firstEvs := c.allEvents(first.ID, -1)
	firstEnd, secondStart := firstEvs[len(firstEvs)-1].Time, evs[1].Time
	if evs[1].Type != toolmark.EventTurnStarted || secondStart.Before(firstEnd) {
		t.Errorf("second turn started at %v, before the first ended at %v", secondStart, firstEnd)
	}
}

// TestCancelQueuedTurn cancels a turn while it waits for a slot: it ends
// turn_cancelled without having started, and the running turn is untouched.
func TestCancelQueuedTurn(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 10 * time.Millisecond, MaxTurns: 1})
	c := newClient(t, srv.URL, "")
	first := c.postTurn(c.newConversation(), twoToolQuestion)
	second := c.postTurn(c.newConversation(), twoToolQuestion)
	c.mustJSON("POST", "/api/turns/"+second.ID+"/cancel", "", http.StatusAccepted, nil)
	evs := c.allEvents(second.ID, -1)
	if len(evs) != 2 || evs[0].Type != toolmark.EventTurnQueued || evs[1].Type != toolmark.EventTurnCancelled {
		t.Fatalf("cancelled queued turn: got %s", summarize(evs))
	}
	checkStream(t, srv, evs)
	if firstEvs := c.allEvents(first.ID, -1); firstEvs[len(firstEvs)-1].Type != toolmark.EventTurnCompleted {
		t.Errorf("the running turn ended with %s", firstEvs[len(firstEvs)-1].Type)
	}
}

// TestDrainHandsOver drains the replica running a turn while its answer
// streams: the other replica adopts the turn and continues the answer from
// the log, its followers see one gapless stream ending turn_completed, and
// the answer reads as the same answer written without the hand-over.
func TestDrainHandsOver(t *testing.T) {
	a := testserver.Start(t, testserver.Options{DemoDelay: 20 * time.Millisecond})
	b := testserver.Start(t, testserver.Options{DemoDelay: 20 * time.Millisecond, DB: a.DB})
	ca, cb := newClient(t, a.URL, ""), newClient(t, b.URL, "")

	// The same question answered without a hand-over, for comparison.
	ref := cb.postTurn(cb.newConversation(), twoToolQuestion)
	refEvs := cb.allEvents(ref.ID, -1)
	refText, err := replayLog(refEvs)
	if err != nil {
		t.Fatal(err)
	}

	turn := ca.postTurn(ca.newConversation(), twoToolQuestion)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp := cb.stream(ctx, turn.ID, -1)
	defer resp.Body.Close()
	var evs []toolmark.Event
	texts, drained := 0, false
	_, _ = readFrames(resp.Body, func(f frame) bool {
		if f.Data == "" {
			return true
		}
		e := mustEvent(t, f)
		evs = append(evs, e)
		if e.Type == toolmark.EventTextDelta {
			texts++
		}
		if texts == 8 && !drained { // well into the answer, every tool done
			drained = true
			a.App.API.Drain()
			a.App.Runner.Drain(context.Background())
		}
		return !e.Type.Terminal()
	})
	if !drained {
		t.Fatal("the turn ended before the drain")
	}
	checkStream(t, b, evs)
	if last := evs[len(evs)-1]; last.Type != toolmark.EventTurnCompleted {
		t.Fatalf("handed-over turn ended with %s", last.Type)
	}
	got, err := replayLog(evs)
	if err != nil {
		t.Fatal(err)
	}
	if toolcallmarkup.RestoreText(stripTags(got)) != toolcallmarkup.RestoreText(stripTags(refText)) {
		t.Errorf("the continued answer differs from one written without a hand-over:\n%s\n---\n%s", stripTags(got), stripTags(refText))
	}
	var tr struct {
		Turn    toolmark.Turn `json:"turn"`
		Content string        `json:"content"`
	}
	cb.mustJSON("GET", "/api/turns/"+turn.ID, "", http.StatusOK, &tr)
	if tr.Turn.Status != toolmark.TurnCompleted || tr.Content != got {
		t.Errorf("stored turn %s, content matches the log: %v", tr.Turn.Status, tr.Content == got)
	}
}

// stripTags removes the ToolCall elements of content, keeping its text.
func stripTags(content string) string {
	spans := toolcallmarkup.Scan(content)
	var b strings.Builder
	pos := 0
	for _, s := range spans {
		if s.Parent >= 0 || s.Start < pos {
			continue
		}
		b.WriteString(content[pos:s.Start])
		pos = s.End
	}
	b.WriteString(content[pos:])
	return strings.TrimSpace(b.String())
}

// TestLostTurnFollowersSeeTheEnd: a turn whose job stops without writing
// its end (its lease was taken, as after a stall) is ended by a sweep, and
// its followers on the replica that ran it get that end; they do not wait
// forever on a turn this replica no longer runs.
func TestLostTurnFollowersSeeTheEnd(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 30 * time.Millisecond, Heartbeat: 200 * time.Millisecond})
	c := newClient(t, srv.URL, "")
	turn := c.postTurn(c.newConversation(), twoToolQuestion)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp := c.stream(ctx, turn.ID, -1)
	defer resp.Body.Close()
	var evs []toolmark.Event
	stolen := false
	_, err := readFrames(resp.Body, func(f frame) bool {
		if f.Data == "" {
			return true
		}
		e := mustEvent(t, f)
		evs = append(evs, e)
		if e.Type == toolmark.EventRoundStarted && !stolen {
			stolen = true
			// A replica that is gone holds the turn now, with its lease run out.
			if _, err := srv.DB.Pool().Exec(ctx, `update turns set lease_owner = 'gone/1/x', lease_expires_at = now() - interval '1 second' where id = $1`, turn.ID); err != nil {
				t.Errorf("taking the lease: %v", err)
			}
		}
		return !e.Type.Terminal()
	})
	if err != nil || len(evs) == 0 {
		t.Fatalf("the stream ended after %d events: %v", len(evs), err)
	}
	var end toolmark.TurnEndData
	if last := evs[len(evs)-1]; last.Type != toolmark.EventTurnFailed || json.Unmarshal(last.Data, &end) != nil || end.Status != toolmark.TurnInterrupted {
		t.Fatalf("the follower's last event: %s %s; want the sweep's turn_failed (interrupted)", last.Type, last.Data)
	}
	checkStream(t, srv, evs)
}

// TestNotifyOnlyWithPeers checks that a replica alone on its database sends
// no event notifications (its followers are fed from memory, and each
// notification costs a transaction where it is heard), that it sends them
// once another replica has started, so that the other's followers are
// woken, and that it goes quiet again after the other stopped.
func TestNotifyOnlyWithPeers(t *testing.T) {
	url := pgtest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a := testserver.Start(t, testserver.Options{DB: pgtest.Open(t, url)})
	ca := newClient(t, a.URL, "")
	notes, err := pgtest.Open(t, url).Listen(ctx, store.ChannelEvents)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// announced runs a turn on a and reports whether a notification named
	// it. Notifications arrive in commit order, so the test's own, sent
	// after the turn ended, comes after any of the turn's.
	announced := func() bool {
		turn := ca.postTurn(ca.newConversation(), "hello")
		ca.allEvents(turn.ID, -1)
		if _, err := conn.Exec(ctx, `select pg_notify($1, 'end')`, store.ChannelEvents); err != nil {
			t.Fatal(err)
		}
		named := false
		for {
			select {
			case n := <-notes:
				if n.Payload == "end" {
					return named
				}
				named = named || strings.Contains(n.Payload, turn.ID+":")
			case <-ctx.Done():
				t.Fatal("the test's notification never came")
			}
		}
	}
	if announced() {
		t.Fatal("a replica alone announced its commits")
	}
	b := testserver.Start(t, testserver.Options{DB: pgtest.Open(t, url)})
	if !announced() {
		t.Fatal("a replica did not announce its commits with another replica started")
	}
	if err := b.Stop(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		t.Fatal(err)
	}
	for announced() {
		if ctx.Err() != nil {
			t.Fatal("a replica went on announcing its commits after the other stopped")
		}
	}
}

// TestLeasesRenewedWithThePoolBusy holds every connection of a replica's
// pool while it runs a turn: its sweep then waits for a connection, and its
// lease renewal, on connections of the group commit's, must not wait behind
// it, or the turn's lease would run out and another replica take over a
// turn that is still running.
func TestLeasesRenewedWithThePoolBusy(t *testing.T) {
	const ttl = time.Second
	a := testserver.Start(t, testserver.Options{DemoDelay: 500 * time.Millisecond, LeaseTTL: ttl, Grace: time.Second})
	ca := newClient(t, a.URL, "")
	turn := ca.postTurn(ca.newConversation(), "hello")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, a.DB.Pool().Config().ConnConfig.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	expiry := func() time.Time {
		var at *time.Time
		if err := conn.QueryRow(ctx, `select lease_expires_at from turns where id = $1`, turn.ID).Scan(&at); err != nil {
			t.Fatal(err)
		}
		if at == nil {
			t.Fatal("the turn has no lease")
		}
		return *at
	}
	pgtest.HoldPool(t, a.DB)
	first := expiry()
	time.Sleep(3 * ttl)
	if next := expiry(); !next.After(first) {
		t.Fatalf("the lease was not renewed with the pool busy: it expires at %v, as it did %v ago", next, 3*ttl)
	}
}
