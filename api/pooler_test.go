package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// TestReplicasThroughPooler is TestReplicas with both servers reaching the
// database through PgBouncer in transaction mode and no direct URL: no
// LISTEN, no liveness lock. A turn started on one is followed on the
// other, which polls, and cancelled from it.
func TestReplicasThroughPooler(t *testing.T) {
	u := pgtest.Pooled(t, pgtest.URL(t))
	a := testserver.Start(t, testserver.Options{DemoDelay: 10 * time.Millisecond, DB: pgtest.Open(t, u)})
	b := testserver.Start(t, testserver.Options{DemoDelay: 10 * time.Millisecond, DB: pgtest.Open(t, u)})
	if a.DB.Sessions() || b.DB.Sessions() {
		t.Fatal("the stores have a session through the pooler")
	}
	ca, cb := newClient(t, a.URL, ""), newClient(t, b.URL, "")

	turn := ca.postTurn(ca.newConversation(), twoToolQuestion)
	start := time.Now()
	onB := cb.allEvents(turn.ID, -1)
	if last := onB[len(onB)-1]; last.Type != toolmark.EventTurnCompleted {
		t.Fatalf("followed on the other replica: ended with %s", last.Type)
	}
	t.Logf("followed on the other replica in %s", time.Since(start))
	if onA := ca.allEvents(turn.ID, -1); !eventsEqual(onA, onB) {
		t.Fatalf("the replicas serve different streams")
	}

	turn = ca.postTurn(ca.newConversation(), twoToolQuestion)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp := ca.stream(ctx, turn.ID, -1)
	defer resp.Body.Close()
	var last toolmark.Event
	sent := false
	_, _ = readFrames(resp.Body, func(f frame) bool {
		if f.Data == "" {
			return true
		}
		last = mustEvent(t, f)
		if last.Type == toolmark.EventRoundStarted && !sent {
			sent = true
			cb.mustJSON("POST", "/api/turns/"+turn.ID+"/cancel", "", http.StatusAccepted, nil)
		}
		return !last.Type.Terminal()
	})
	if last.Type != toolmark.EventTurnCancelled {
		t.Fatalf("cancelled from the other replica: ended with %s", last.Type)
	}
}

// TestConversationWatchThroughPooler: without a session, a replica hears
// no ChannelTurns; it polls the active turns of the conversations watched
// on it at its looks, so a turn started on the other replica still reaches
// its watchers, once.
func TestConversationWatchThroughPooler(t *testing.T) {
	u := pgtest.Pooled(t, pgtest.URL(t))
	a := testserver.Start(t, testserver.Options{DemoDelay: 200 * time.Millisecond, DB: pgtest.Open(t, u)})
	b := testserver.Start(t, testserver.Options{DemoDelay: 200 * time.Millisecond, DB: pgtest.Open(t, u)})
	ca, cb := newClient(t, a.URL, ""), newClient(t, b.URL, "")
	conv := ca.newConversation()
	onB := openWatch(t, cb, conv)
	turn := ca.postTurn(conv, "Research how cancellation works; what happens after a crash?")
	select {
	case got := <-onB.turns:
		if got != turn.ID {
			t.Fatalf("watcher on b: turn %s, want %s", got, turn.ID)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a turn started on replica a never reached the watcher on replica b")
	}
	ca.mustJSON("POST", "/api/turns/"+turn.ID+"/cancel", "", http.StatusAccepted, nil)
	ca.allEvents(turn.ID, -1)
	select {
	case got := <-onB.turns:
		t.Errorf("watcher on b: turn %s told twice", got)
	case <-time.After(time.Second):
	}
}
