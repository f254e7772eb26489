package simplifiedagent_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	fp "github.com/toolmark/toolmark/internal/harness/fakeprovider"
	"github.com/toolmark/toolmark/simplifiedagent"
	"github.com/toolmark/toolmark/simplifiedagent/tools"
	"github.com/toolmark/toolmark/turnstate"
)

// TestReasoningLaterTurn: a reasoning model's tool turn, rebuilt from what
// a store keeps (the logged events replayed into a turn state: content,
// tool-call records, reasoning items), goes back in a later turn as its
// API wants it; the same history without its reasoning, or with an item
// altered, is refused as the real service refuses it.
func TestReasoningLaterTurn(t *testing.T) {
	for _, d := range []fp.Dialect{fp.DeepSeek, fp.Gemini, fp.AnthropicThinking, fp.Mistral} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			srv := fp.Start(t, d, fp.Reply{Redacted: d == fp.AnthropicThinking, Calls: []fp.Call{search("call_h1", `{"query": "resume"}`)}},
				answer, fp.Reply{Text: []string{"Again."}})
			search := tools.NewSearchDocuments(&fakeSearcher{docs: testDocs})
			run := func(hist []toolmark.HistoryTurn) (*recorder, simplifiedagent.Result, error) {
				rec := newRecorder()
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				res, err := simplifiedagent.Run(ctx, simplifiedagent.Request{Model: srv.Model(t), Input: "How does resume work?",
					History: simplifiedagent.BuildHistory("", hist), Tools: []simplifiedagent.Tool{search},
					Retry: retryFast, Logger: discardLogger()}, rec.emit)
				return rec, res, err
			}
			rec, res, err := run(nil)
			if err != nil {
				t.Fatalf("first turn: %v (refused: %v)", err, srv.Problems())
			}
			st := turnstate.New()
			for i, e := range rec.all() {
				raw, _ := json.Marshal(e.Data)
				if err := st.ApplyEvent(toolmark.Event{Seq: int64(i + 1), Type: e.Type, Data: raw}); err != nil {
					t.Fatal(err)
				}
			}
			r := st.Reasoning()
			if r == nil || len(r.Parts) == 0 {
				t.Fatalf("no reasoning kept: %+v", r)
			}
			if d.StreamsThinking() && r.Text == "" {
				t.Errorf("no displayable thinking: %+v", r)
			}
			turn := toolmark.HistoryTurn{UserText: "How does resume work?", AssistantContent: st.Content(),
				ToolCalls: res.ToolCalls, Reasoning: r.Parts}
			if _, _, err := run([]toolmark.HistoryTurn{turn}); err != nil || len(srv.Problems()) > 0 {
				t.Fatalf("later turn: %v (refused: %v)", err, srv.Problems())
			}
			if d == fp.Mistral {
				return // Mistral wants no thinking back
			}
			dropped := turn
			dropped.Reasoning = nil
			altered := turn
			altered.Reasoning = append([]toolmark.ReasoningPart(nil), turn.Reasoning...)
			for i := range altered.Reasoning {
				p := &altered.Reasoning[i]
				p.Text, p.Signature = strings.ReplaceAll(p.Text, "search", "skip"), p.Signature+"x"
			}
			for name, h := range map[string]toolmark.HistoryTurn{"dropped": dropped, "altered": altered} {
				before := len(srv.Problems())
				if _, _, err := run([]toolmark.HistoryTurn{h}); toolmark.ErrorCode(err) != toolmark.EBADREQUEST || len(srv.Problems()) == before {
					t.Errorf("%s reasoning: error %v, refusals %v; want the service to refuse it", name, err, srv.Problems()[before:])
				}
			}
		})
	}
}

// TestErrorSentences: a cut stream, a 500, a refused connection, an
// exhausted quota and a low credit balance reach people as five different
// sentences, with their own codes, none naming a URL or host.
func TestErrorSentences(t *testing.T) {
	closed := httptest.NewServer(nil)
	closed.Close()
	refused, err := simplifiedagent.NewOpenAI(closed.URL+"/v1", fp.APIKey, "gpt-4o-mini")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		srv  *fp.Server
		want string
	}{
		{"cut stream", fp.Start(t, fp.OpenAI, fp.Reply{Text: []string{"Half"}, Cut: true, Calls: []fp.Call{search("c1", `{"query": "x"}`)}}), toolmark.ESTREAMCUT},
		{"500", fp.Start(t, fp.OpenAI, fp.Reply{Status: 500}), toolmark.ESERVICEFAILED},
		{"refused connection", nil, toolmark.EUNAVAILABLE},
		{"quota", fp.Start(t, fp.OpenAI, fp.Reply{Status: 429, Error: "quota"}), toolmark.EQUOTA},
		{"credit", fp.Start(t, fp.Anthropic, fp.Reply{Status: 400, Error: "quota"}), toolmark.ECREDIT},
	}
	seen := map[string]string{}
	for _, c := range cases {
		req := simplifiedagent.Request{Model: refused, Input: "Hi", Retry: retryFast, Logger: discardLogger()}
		if c.srv != nil {
			req.Model = c.srv.Model(t)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err := simplifiedagent.Run(ctx, req, nil)
		cancel()
		msg := toolmark.ErrorMessage(err)
		if got := toolmark.ErrorCode(err); got != c.want {
			t.Errorf("%s: code %q (%v), want %q", c.name, got, err, c.want)
		}
		if bad := leak(msg, c.srv); bad != "" || strings.Contains(msg, strings.TrimPrefix(closed.URL, "http://")) {
			t.Errorf("%s: %q %s", c.name, msg, bad)
		}
		if other, dup := seen[msg]; dup {
			t.Errorf("%s and %s read the same: %q", c.name, other, msg)
		}
		seen[msg] = c.name
	}
}

// TestReasoningResume: an answer handed over mid-turn (Request.Resume)
// goes on with its finished calls' reasoning, which DeepSeek wants back;
// without it the service refuses the request.
func TestReasoningResume(t *testing.T) {
	srv := fp.Start(t, fp.DeepSeek, fp.Reply{Calls: []fp.Call{search("call_rs1", `{"query": "resume"}`)}}, answer)
	search := tools.NewSearchDocuments(&fakeSearcher{docs: testDocs})
	rec := newRecorder()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// The first round only, as a replica that drained after it left it.
	res, err := simplifiedagent.Run(ctx, simplifiedagent.Request{Model: srv.Model(t), Input: "How does resume work?",
		Tools: []simplifiedagent.Tool{search}, MaxRounds: 2, Retry: retryFast, Logger: discardLogger()}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	st := turnstate.New()
	for _, e := range rec.all() {
		if e.Type == toolmark.EventRoundStarted && e.Data.(toolmark.RoundStartedData).Round == 2 {
			break
		}
		if err := st.Apply(e, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	for name, parts := range map[string][]toolmark.ReasoningPart{"with": st.Reasoning().Parts, "without": nil} {
		before := len(srv.Problems())
		_, err := simplifiedagent.Run(ctx, simplifiedagent.Request{Model: srv.Model(t), Input: "How does resume work?",
			Tools: []simplifiedagent.Tool{search}, Retry: retryFast, Logger: discardLogger(),
			Resume: &toolmark.Resume{Content: st.Content(), ToolCalls: res.ToolCalls, Reasoning: parts}}, nil)
		refused := len(srv.Problems()) > before
		if name == "with" && (err != nil || refused) || name == "without" && !refused {
			t.Errorf("resumed %s its reasoning: error %v, refusals %v", name, err, srv.Problems()[before:])
		}
	}
}
