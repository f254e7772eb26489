package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5/middleware"
	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark"
	tmclient "github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/internal/harness/testserver"
	"github.com/toolmark/toolmark/store"
)

// queryCounter counts the queries the store makes for HTTP requests (their
// context has a request id), not those of background work, and keeps the
// statements of the request whose id is watch.
type queryCounter struct {
	n     atomic.Int64
	watch string
	mu    sync.Mutex
	sql   []string
}

func (q *queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if id := middleware.GetReqID(ctx); id != "" {
		q.n.Add(1)
		if id == q.watch {
			q.mu.Lock()
			q.sql = append(q.sql, d.SQL)
			q.mu.Unlock()
		}
	}
	return ctx
}

// watched returns the statements of the watched request.
func (q *queryCounter) watched() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.sql)
}

func (q *queryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// longConversation starts a server whose store counts its queries and
// makes a conversation of turns answers: one demo turn, run for real, and
// its copies.
func longConversation(tb testing.TB, turns int) (*testserver.Server, *queryCounter, string) {
	tb.Helper()
	qc := &queryCounter{}
	url := pgtest.URL(tb)
	db, err := store.Open(context.Background(), url, store.WithTracer(qc))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(db.Close)
	srv := testserver.Start(tb, testserver.Options{DB: db})
	c := tmclient.New(srv.URL)
	ctx := context.Background()
	conv, err := c.CreateConversation(ctx, "long")
	if err != nil {
		tb.Fatal(err)
	}
	ti, err := c.PostTurn(ctx, conv.ID, "How does resume work, and what happens on cancellation?", "")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := srv.App.Runner.Wait(ctx, ti.Turn.ID); err != nil {
		tb.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, fmt.Sprintf(`
		do $$
		declare src turns; nt text; um text; am text;
		begin
			select * into src from turns where id = '%s';
			for i in 2..%d loop
				nt := gen_random_uuid()::text; um := gen_random_uuid()::text; am := gen_random_uuid()::text;
				insert into messages (id, conversation_id, turn_id, role, content, status, seq)
					select um, conversation_id, nt, role, content, status, seq from messages where id = src.user_message_id;
				insert into messages (id, conversation_id, turn_id, role, content, status, seq)
					select am, conversation_id, nt, role, content, status, seq from messages where id = src.assistant_message_id;
				insert into turns (id, conversation_id, user_message_id, assistant_message_id, status, last_seq, started_at, finished_at, input_tokens, output_tokens)
					values (nt, src.conversation_id, um, am, src.status, src.last_seq, now(), now(), src.input_tokens, src.output_tokens);
				insert into tool_calls (turn_id, id, parent_id, name, arguments, status, result, error, started_at, finished_at)
					select nt, id, parent_id, name, arguments, status, result, error, started_at, finished_at from tool_calls where turn_id = src.id;
				insert into todos (turn_id, todos) select nt, todos from todos where turn_id = src.id;
			end loop;
		end $$`, ti.Turn.ID, turns))
	if err != nil {
		tb.Fatal(err)
	}
	return srv, qc, conv.ID
}

type pageJSON struct {
	Messages []struct {
		toolmark.Message
		HTML      string                    `json:"html"`
		ToolCalls []toolmark.ToolCallRecord `json:"toolCalls"`
		Todos     []toolmark.Todo           `json:"todos"`
		Usage     *toolmark.Usage           `json:"usage"`
	} `json:"messages"`
	More   bool  `json:"more"`
	Before int64 `json:"before"`
}

func getPage(tb testing.TB, srv *testserver.Server, path string) pageJSON {
	tb.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("GET %s: %s", path, resp.Status)
	}
	var p pageJSON
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		tb.Fatal(err)
	}
	return p
}

// TestOpenConversationInConstantQueries: opening a conversation reads the
// same few queries for 10 and 300 turns, pages back through every message
// exactly once, and keeps each finished message's rendering.
func TestOpenConversationInConstantQueries(t *testing.T) {
	counts := map[int]int64{}
	for _, turns := range []int{10, 300} {
		srv, qc, conv := longConversation(t, turns)
		path := "/api/conversations/" + conv
		getPage(t, srv, path) // renders and keeps the renderings
		time.Sleep(200 * time.Millisecond)
		before := qc.n.Load()
		p := getPage(t, srv, path)
		counts[turns] = qc.n.Load() - before
		want := min(2*turns, store.DefaultPageMessages)
		if len(p.Messages) != want || p.More != (2*turns > want) {
			t.Fatalf("%d turns: %d messages, more %v; want the latest %d", turns, len(p.Messages), p.More, want)
		}
		last := p.Messages[len(p.Messages)-1]
		if last.Role != toolmark.RoleAssistant || last.HTML == "" || len(last.ToolCalls) == 0 || len(last.Todos) == 0 || last.Usage == nil {
			t.Errorf("the last answer lacks its html, tool calls, todos or usage: %+v", last)
		}
		seen := map[string]bool{}
		for page := p; ; page = getPage(t, srv, fmt.Sprintf("%s?before=%d&limit=70", path, page.Before)) {
			for _, m := range page.Messages {
				if seen[m.ID] {
					t.Fatalf("message %s on two pages", m.ID)
				}
				seen[m.ID] = true
			}
			if !page.More {
				break
			}
		}
		if len(seen) != 2*turns {
			t.Errorf("%d turns: paging saw %d messages, want %d", turns, len(seen), 2*turns)
		}
	}
	if counts[10] != counts[300] || counts[300] > 4 {
		t.Errorf("queries to open a conversation: %d for 10 turns, %d for 300; want the same, at most 4", counts[10], counts[300])
	}
	t.Logf("queries per open: %v", counts)
}

// BenchmarkOpenConversation measures the server's time to open a
// conversation of 100 and 1 000 turns (its latest page), renderings kept.
func BenchmarkOpenConversation(b *testing.B) {
	for _, turns := range []int{100, 1000} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			srv, qc, conv := longConversation(b, turns)
			path := "/api/conversations/" + conv
			getPage(b, srv, path)
			time.Sleep(200 * time.Millisecond)
			q0 := qc.n.Load()
			b.ResetTimer()
			for range b.N {
				getPage(b, srv, path)
			}
			b.ReportMetric(float64(qc.n.Load()-q0)/float64(b.N), "queries/op")
		})
	}
}
