package api_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5/middleware"
	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/pgtest"
	"github.com/toolmark/toolmark/internal/testserver"
	"github.com/toolmark/toolmark/store"
)

// requestQueries records the statements the store runs for each request
// id.
type requestQueries struct {
	mu  sync.Mutex
	sql map[string][]string
}

func (q *requestQueries) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if id := middleware.GetReqID(ctx); id != "" {
		q.mu.Lock()
		q.sql[id] = append(q.sql[id], d.SQL)
		q.mu.Unlock()
	}
	return ctx
}

func (q *requestQueries) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (q *requestQueries) of(id string) []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.sql[id]
}

// TestStreamOfALocalTurn opens the stream of a turn that runs on this
// replica: its owner gets the events with no query but the token's lookup
// (the turn is found in memory), and another user gets 404, as for a turn
// read from the store.
func TestStreamOfALocalTurn(t *testing.T) {
	qs := &requestQueries{sql: map[string][]string{}}
	db, err := store.Open(context.Background(), pgtest.URL(t), store.WithTracer(qs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	srv, alice, bob := tokenServerWith(t, testserver.Options{DB: db, DemoDelay: 20 * time.Millisecond})
	conv := alice.newConversation()
	var posted struct {
		Turn toolmark.Turn `json:"turn"`
	}
	alice.mustJSON(http.MethodPost, "/api/conversations/"+conv+"/turns", `{"content":"How does resume work?"}`, http.StatusAccepted, &posted)
	if _, _, ok := srv.App.Runner.Local(posted.Turn.ID); !ok {
		t.Fatal("the turn just posted does not run on this replica")
	}

	if st, _, _ := bob.do(http.MethodGet, "/api/turns/"+posted.Turn.ID+"/events", ""); st != http.StatusNotFound {
		t.Errorf("another user's stream of a running turn: got %d, want 404", st)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/turns/"+posted.Turn.ID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+alice.token)
	req.Header.Set("X-Request-Id", "local-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the owner's stream: got %s, want 200", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	events := 0
	for sc.Scan() && events < 5 {
		if strings.HasPrefix(sc.Text(), "event: ") {
			events++
		}
	}
	if events < 5 {
		t.Fatalf("the owner's stream ended after %d events: %v", events, sc.Err())
	}
	if sql := qs.of("local-stream"); len(sql) != 1 || !strings.Contains(sql[0], "api_tokens") {
		t.Errorf("the stream of a local turn ran %d statements, want only the token's lookup: %q", len(sql), sql)
	}
}
