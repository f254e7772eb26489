package simplifiedagent_test

import (
	"context"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/callbacks"
	lctools "github.com/tmc/langchaingo/tools"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// idRecorder is a langchaingo callbacks handler that notes the tool-call id
// it finds in the context of each tool callback.
type idRecorder struct {
	callbacks.SimpleHandler
	mu           sync.Mutex
	starts, ends []string
}

func (r *idRecorder) HandleToolStart(ctx context.Context, _ string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts = append(r.starts, simplifiedagent.ToolCallIDFromContext(ctx))
}

func (r *idRecorder) HandleToolEnd(ctx context.Context, _ string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ends = append(r.ends, simplifiedagent.ToolCallIDFromContext(ctx))
}

// TestLangchaingoToolUnchanged runs langchaingo's own Calculator tool, as it
// is, through the loop: it gets a tag and the tool_call_* events, and the
// callbacks it makes itself find the tool-call id in their context.
func TestLangchaingoToolUnchanged(t *testing.T) {
	srv := newSSEServer(t, "calc_1.sse", "calc_2.sse")
	model, err := simplifiedagent.NewOpenAI(srv.URL+"/v1", "test-key", "gpt-4o-mini")
	if err != nil {
		t.Fatal(err)
	}
	rec := &idRecorder{}
	var tool lctools.Tool = lctools.Calculator{CallbacksHandler: rec}
	events := newRecorder()
	res, err := simplifiedagent.Run(context.Background(), simplifiedagent.Request{
		Model: model, Input: "What is 6 times 7?", Tools: []simplifiedagent.Tool{tool},
	}, events.emit)
	if err != nil {
		t.Fatal(err)
	}
	content := replay(t, events.all())
	calls := toolcallmarkup.Parse(content)
	if len(calls) != 1 || calls[0].Type != "calculator" || calls[0].Status != toolcallmarkup.StatusSuccess {
		t.Fatalf("got tags %+v, want one successful calculator tag", calls)
	}
	id := calls[0].ID
	var result string
	for _, e := range events.ofType(toolmark.EventToolCallSuccess) {
		if d, ok := e.Data.(toolmark.ToolCallData); ok && d.ToolCallID == id {
			result = d.Result
		}
	}
	if result == "" {
		t.Errorf("no tool_call_success for %s", id)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Result != "42" {
		t.Errorf("tool call records %+v, want the calculator's result 42", res.ToolCalls)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.starts) != 1 || rec.starts[0] != id || len(rec.ends) != 1 || rec.ends[0] != id {
		t.Errorf("the tool's own callbacks saw ids %v / %v, want %q", rec.starts, rec.ends, id)
	}
}
