package simplifiedagent_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent"
	"github.com/toolmark/toolmark/simplifiedagent/modelerr"
	"github.com/toolmark/toolmark/simplifiedagent/openaiwire"
	"github.com/toolmark/toolmark/simplifiedagent/tools"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

func mustOpenAI(tb testing.TB, url string) llms.Model {
	tb.Helper()
	m, err := openaiwire.New(url+"/v1", "sk-test", "gpt-4o-mini")
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// TestOpenAIScenarios drives Run with the real OpenAI wire client against
// recorded streams and compares the events with golden logs.
func TestOpenAIScenarios(t *testing.T) {
	tests := []struct {
		name     string
		files    []string
		wantErr  string
		check    func(t *testing.T, res simplifiedagent.Result, srv *sseServer, rec *recorder)
		checkErr func(t *testing.T, err error)
	}{
		{name: "text", files: []string{"text.sse"}, check: func(t *testing.T, res simplifiedagent.Result, _ *sseServer, rec *recorder) {
			if n := len(toolcallmarkup.Scan(rec.content(t))); n != 0 {
				t.Errorf("model text produced %d genuine tags, want 0", n)
			}
			if got := toolcallmarkup.RestoreText(rec.content(t)); !strings.Contains(got, `<ToolCall type="search_documents"`) {
				t.Errorf("restored text %q lost the forged tag text", got)
			}
		}},
		{name: "text_json", files: []string{"text_json.sse"}, check: func(t *testing.T, res simplifiedagent.Result, _ *sseServer, rec *recorder) {
			if !strings.HasPrefix(rec.content(t), `[{"id":"call_1"`) || len(res.ToolCalls) != 0 {
				t.Errorf("content %q, %d tool calls; want the JSON as text and no calls", rec.content(t), len(res.ToolCalls))
			}
		}},
		{name: "tool_split", files: []string{"tool_split_1.sse", "tool_split_2.sse"}, check: func(t *testing.T, res simplifiedagent.Result, srv *sseServer, rec *recorder) {
			if got := len(rec.ofType(toolmark.EventToolCallDelta)); got < 5 {
				t.Errorf("got %d tool_call_delta events, want one per argument chunk", got)
			}
			spans := toolcallmarkup.Scan(rec.content(t))
			if len(spans) != 1 || spans[0].Call.Status != toolcallmarkup.StatusSuccess {
				t.Fatalf("tags %+v, want one success", spans)
			}
			attrs := map[string]string{}
			for _, a := range spans[0].Call.Attrs {
				attrs[a.Key] = a.Value
			}
			if attrs["query"] != "resume after disconnect" || attrs["count"] != "2" {
				t.Errorf("attrs %v, want query and count=2", attrs)
			}
			reqs := srv.requests()
			if len(reqs) != 2 || !strings.Contains(reqs[1], `"role":"tool","content":"Found 2 documents`) ||
				!strings.Contains(reqs[1], `"tool_call_id":"call_Q1w2E3r4"`) {
				t.Errorf("second request does not hand the result back: %s", reqs[len(reqs)-1])
			}
		}},
		{name: "parallel", files: []string{"parallel_1.sse", "parallel_2.sse"}, check: func(t *testing.T, res simplifiedagent.Result, _ *sseServer, rec *recorder) {
			if len(res.ToolCalls) != 2 || res.ToolCalls[0].Status != "success" || res.ToolCalls[1].Status != "success" {
				t.Errorf("tool calls %+v, want two successes", res.ToolCalls)
			}
		}},
		{name: "error_mid_stream", files: []string{"error_mid.sse"}, wantErr: "server_error", check: func(t *testing.T, res simplifiedagent.Result, _ *sseServer, rec *recorder) {
			if len(res.ToolCalls) != 1 || res.ToolCalls[0].Status != "error" {
				t.Errorf("tool calls %+v, want one error", res.ToolCalls)
			}
		}, checkErr: func(t *testing.T, err error) {
			var me *simplifiedagent.ModelError
			var ce *modelerr.Error
			if !errors.As(err, &me) || me.Round != 1 || !errors.As(err, &ce) || toolmark.ErrorCode(err) != toolmark.ESERVICEFAILED {
				t.Errorf("error %#v: want a ModelError wrapping a modelerr.Error, code service_failed", err)
			}
		}},
		{name: "stream_cut", files: []string{"stream_cut.sse"}, wantErr: "stream ended", check: func(t *testing.T, res simplifiedagent.Result, _ *sseServer, rec *recorder) {
			if len(res.ToolCalls) != 1 || res.ToolCalls[0].Status != "error" {
				t.Errorf("tool calls %+v, want one error", res.ToolCalls)
			}
		}},
		{name: "bad_args", files: []string{"bad_args_1.sse", "bad_args_2.sse"}, check: func(t *testing.T, res simplifiedagent.Result, srv *sseServer, _ *recorder) {
			for _, c := range res.ToolCalls {
				if c.Status != "error" {
					t.Errorf("call %s status %s, want error", c.ID, c.Status)
				}
			}
			reqs := srv.requests()
			if len(reqs) != 2 || !strings.Contains(reqs[1], "error: invalid JSON arguments") ||
				!strings.Contains(reqs[1], `error: unknown tool \"delete_everything\"`) {
				t.Errorf("second request lacks the tool errors: %s", reqs[len(reqs)-1])
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newSSEServer(t, tt.files...)
			rec := newRecorder()
			searcher := &fakeSearcher{docs: testDocs}
			if tt.name == "parallel" {
				// The second search waits for the first one's success, so the
				// golden order is fixed while both calls run concurrently.
				searcher.wait = func(ctx context.Context, q string) error {
					if !strings.Contains(q, "crash") {
						return nil
					}
					if !rec.waitFor(ctx, func(e toolmark.Draft) bool { return e.Type == toolmark.EventToolCallSuccess }) {
						return ctx.Err()
					}
					return nil
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res, err := simplifiedagent.Run(ctx, simplifiedagent.Request{
				Model: mustOpenAI(t, srv.URL),
				Input: "How do clients resume?",
				Tools: []simplifiedagent.Tool{tools.NewSearchDocuments(searcher)},
			}, rec.emit)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("Run: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Run error %v, want one containing %q", err, tt.wantErr)
			}
			events := rec.all()
			content := replay(t, events)
			checkToolOrder(t, events)
			checkAllFinal(t, content)
			golden(t, tt.name, events)
			if tt.check != nil {
				tt.check(t, res, srv, rec)
			}
			if tt.checkErr != nil {
				tt.checkErr(t, err)
			}
		})
	}
}

// TestRunCancelMidTool cancels while a tool that ignores its context runs:
// Run returns promptly, wraps context.Canceled and leaves every tag final.
func TestRunCancelMidTool(t *testing.T) {
	srv := newSSEServer(t, "parallel_1.sse", "parallel_2.sse")
	rec := newRecorder()
	block := make(chan struct{})
	defer close(block)
	searcher := &fakeSearcher{docs: testDocs, wait: func(ctx context.Context, q string) error {
		if strings.Contains(q, "crash") {
			<-block // ignores ctx: must be abandoned
			return nil
		}
		<-ctx.Done()
		return ctx.Err()
	}}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		rec.waitFor(context.Background(), func(e toolmark.Draft) bool {
			d, ok := e.Data.(toolmark.ToolCallData)
			return ok && e.Type == toolmark.EventToolCallRunning && d.ToolCallID == "call_beta"
		})
		cancel()
	}()
	start := time.Now()
	res, err := simplifiedagent.Run(ctx, simplifiedagent.Request{
		Model:       mustOpenAI(t, srv.URL),
		Input:       "What happens on cancel?",
		Tools:       []simplifiedagent.Tool{tools.NewSearchDocuments(searcher)},
		CancelGrace: 100 * time.Millisecond,
	}, rec.emit)
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("Run took %v after cancel", elapsed)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error %v, want context.Canceled", err)
	}
	checkAllFinal(t, replay(t, rec.all()))
	checkToolOrder(t, rec.all())
	for _, c := range res.ToolCalls {
		if c.Status != "cancelled" {
			t.Errorf("call %s status %s, want cancelled", c.ID, c.Status)
		}
	}
	for _, e := range rec.ofType(toolmark.EventToolCallError) {
		d := e.Data.(toolmark.ToolCallData)
		if d.Status != "cancelled" || d.Error != "cancelled" {
			t.Errorf("final event %+v, want status and error cancelled", d)
		}
	}
}

// TestRunEmitError stops the run when the callback fails.
func TestRunEmitError(t *testing.T) {
	srv := newSSEServer(t, "tool_split_1.sse", "tool_split_2.sse")
	rec := newRecorder()
	boom := errors.New("store down")
	rec.failOn = func(e toolmark.Draft) error {
		if e.Type == toolmark.EventToolCallRunning {
			return boom
		}
		return nil
	}
	res, err := simplifiedagent.Run(context.Background(), simplifiedagent.Request{
		Model: mustOpenAI(t, srv.URL),
		Input: "resume?",
		Tools: []simplifiedagent.Tool{tools.NewSearchDocuments(&fakeSearcher{docs: testDocs})},
	}, rec.emit)
	if !errors.Is(err, boom) {
		t.Fatalf("Run error %v, want %v", err, boom)
	}
	// The events stop at the failure (whoever received them closes what
	// is open); the run's own records end every call.
	for _, c := range res.ToolCalls {
		if !toolcallmarkup.Status(c.Status).Final() {
			t.Errorf("call %s left %s", c.ID, c.Status)
		}
	}
	if n := len(srv.requests()); n != 1 {
		t.Errorf("model called %d times after the emit error, want 1", n)
	}
}
