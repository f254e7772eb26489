package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/internal/harness/testserver"
	"github.com/toolmark/toolmark/store"
)

// TestStreamOfALocalTurn opens the stream of a turn that runs on this
// replica: its owner gets the events with no query but the token's lookup
// (the turn is found in memory), and another user gets 404, as for a turn
// read from the store.
func TestStreamOfALocalTurn(t *testing.T) {
	qc := &queryCounter{watch: "local-stream"}
	srv, alice, bob := tokenServerWith(t, testserver.Options{DB: pgtest.New(t, store.WithTracer(qc)), DemoDelay: 20 * time.Millisecond})
	turn := alice.postTurn(alice.newConversation(), "How does resume work?")
	if _, _, ok := srv.App.Runner.Local(turn.ID); !ok {
		t.Fatal("the turn just posted does not run on this replica")
	}

	if st, _, _ := bob.do(http.MethodGet, "/api/turns/"+turn.ID+"/events", ""); st != http.StatusNotFound {
		t.Errorf("another user's stream of a running turn: got %d, want 404", st)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp := alice.stream(ctx, turn.ID, -1, "X-Request-Id", qc.watch)
	defer resp.Body.Close()
	events := 0
	if _, err := readFrames(resp.Body, func(f frame) bool {
		if f.Event != "" {
			events++
		}
		return events < 5
	}); err != nil || events < 5 {
		t.Fatalf("the owner's stream ended after %d events: %v", events, err)
	}
	if sql := qc.watched(); len(sql) != 1 || !strings.Contains(sql[0], "api_tokens") {
		t.Errorf("the stream of a local turn ran %d statements, want only the token's lookup: %q", len(sql), sql)
	}
}
