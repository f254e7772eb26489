package e2e

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/internal/harness/bench"
	fp "github.com/toolmark/toolmark/internal/harness/fakeprovider"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/internal/harness/testserver"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// TestProvidersEndToEnd runs the toolmark binary as a user would, pointed at
// a local Anthropic and a local OpenAI service by the environment
// (ANTHROPIC_BASE_URL, OPENAI_BASE_URL), each validating every request as
// the real API does: a text-then-tool turn, a parallel-tool turn (with the
// first turn in its history) and a turn whose first attempt is overloaded
// all complete, with every tag final, the wait shown while it lasts and
// the tokens counted.
func TestProvidersEndToEnd(t *testing.T) {
	bin := testserver.Binary(t)
	for _, d := range []fp.Dialect{fp.Anthropic, fp.OpenAI} {
		t.Run(string(d), func(t *testing.T) {
			model := fp.Start(t, d,
				fp.Reply{Text: []string{"I'll search ", "the docs."}, Input: 100, Output: 10,
					Calls: []fp.Call{{ID: "toolu_01", Name: "search_documents", Args: []string{`{"query":`, ` "resume"}`}}}},
				fp.Reply{Text: []string{"Clients resume with Last-Event-ID."}, Input: 150, Output: 8},
				fp.Reply{Text: []string{"Two searches."}, Calls: []fp.Call{
					{ID: "toolu_02", Name: "search_documents", Args: []string{`{"query": "resume"}`}},
					{ID: "toolu_03", Name: "search_documents", Args: []string{`{"query": "cancel"}`}}}},
				fp.Reply{Text: []string{"Both are documented."}},
				fp.Reply{Status: 529, RetryAfter: "1"},
				fp.Reply{Text: []string{"Recovered after the wait."}, Input: 40, Output: 5},
			)
			env := append(os.Environ(), "TOOLMARK_MODEL_PROVIDER=", "OPENAI_BASE_URL=", "OPENAI_API_KEY=", "ANTHROPIC_API_KEY=", "ANTHROPIC_BASE_URL=")
			if d == fp.Anthropic {
				env = append(env, "ANTHROPIC_API_KEY="+fp.APIKey, "ANTHROPIC_BASE_URL="+model.BaseURL())
			} else {
				env = append(env, "OPENAI_API_KEY="+fp.APIKey, "OPENAI_BASE_URL="+model.BaseURL())
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			srv, err := bench.StartServer(ctx, bench.ServerConfig{Command: []string{bin, "serve"}, DatabaseURL: pgtest.URL(t), Env: env, ModelFromEnv: true})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Stop()
			c := client.New(srv.URL)
			conv, err := c.CreateConversation(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			turn := func(question string, calls int) []toolmark.Event {
				t.Helper()
				ti, err := c.PostTurn(ctx, conv.ID, question, "")
				if err != nil {
					t.Fatal(err)
				}
				evs := followAll(t, c, ti.Turn.ID, 0)
				last := evs[len(evs)-1]
				if last.Type != toolmark.EventTurnCompleted {
					t.Fatalf("%q ended with %s %s", question, last.Type, last.Data)
				}
				st, err := c.GetTurn(ctx, ti.Turn.ID)
				if err != nil {
					t.Fatal(err)
				}
				spans := toolcallmarkup.Scan(st.Content)
				if len(spans) != calls {
					t.Errorf("%q: %d tags, want %d: %s", question, len(spans), calls, st.Content)
				}
				for _, sp := range spans {
					if sp.Call.Status != toolcallmarkup.StatusSuccess {
						t.Errorf("%q: tag %s is %s", question, sp.Call.ID, sp.Call.Status)
					}
				}
				return evs
			}
			first := turn("How does resume work?", 1)
			var end toolmark.TurnEndData
			_ = json.Unmarshal(first[len(first)-1].Data, &end)
			if end.Usage == nil || *end.Usage != (toolmark.Usage{InputTokens: 250, OutputTokens: 18}) {
				t.Errorf("usage %+v, want 250 in and 18 out", end.Usage)
			}
			if st, err := c.GetTurn(ctx, first[0].TurnID); err != nil || st.Turn.Usage == nil || st.Turn.Usage.InputTokens != 250 {
				t.Errorf("GET /api/turns/{id}: usage %+v (%v), want the turn's tokens", st.Turn.Usage, err)
			}
			turn("And cancellation?", 2)
			third := turn("Once more?", 0)
			var retry toolmark.ModelRetryData
			for _, e := range third {
				if e.Type == toolmark.EventModelRetry {
					_ = json.Unmarshal(e.Data, &retry)
				}
			}
			if retry.Code != toolmark.EOVERLOADED || retry.Message != "The model service is overloaded — retrying in 1 s" {
				t.Errorf("model_retry %+v, want the overload and its wait", retry)
			}
			if p := model.Problems(); len(p) > 0 {
				t.Errorf("the service refused what toolmark sent: %v", p)
			}
			if n := len(model.Requests()); n != 6 {
				t.Errorf("%d requests, want 6", n)
			}
			// The second turn's first request carries the first turn whole:
			// its text, its call and the call's result.
			reqs, _ := json.Marshal(model.Requests()[2])
			if !strings.Contains(string(reqs), "toolu_01") || !strings.Contains(string(reqs), "I'll search the docs.") {
				t.Errorf("the second turn's request lacks the first turn: %s", reqs)
			}
		})
	}
}
