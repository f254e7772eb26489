package simplifiedagent_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/toolmark/toolmark/simplifiedagent"
	"github.com/toolmark/toolmark/simplifiedagent/tools"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// TestAnthropicStream drives langchaingo's anthropic provider against a
// local server speaking the messages API's SSE format: text streams, the
// tool call arrives whole at the end of the round, and the tool result goes
// back as a tool_result block.
func TestAnthropicStream(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		n := len(bodies)
		bodies = append(bodies, string(b))
		mu.Unlock()
		if r.URL.Path != "/v1/messages" || r.Header.Get("x-api-key") != "sk-ant-test" || n > 1 {
			http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"unexpected"}}`, 400)
			return
		}
		fixture, err := os.ReadFile([]string{"testdata/anthropic/tool_1.sse", "testdata/anthropic/tool_2.sse"}[n])
		if err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(fixture)
	}))
	defer srv.Close()
	model, err := simplifiedagent.NewAnthropic(srv.URL+"/v1", "sk-ant-test", "claude-sonnet-4-5")
	if err != nil {
		t.Fatal(err)
	}
	_, rec, err := runChecked(t, simplifiedagent.Request{Model: model, Input: "resume?",
		Tools: []simplifiedagent.Tool{tools.NewSearchDocuments(&fakeSearcher{docs: testDocs})}})
	if err != nil {
		t.Fatal(err)
	}
	content := rec.content(t)
	spans := toolcallmarkup.Scan(content)
	if len(spans) != 1 || spans[0].Call.ID != "toolu_01T1x1fJ34qAmk2tNTrN7Up6" || spans[0].Call.Status != toolcallmarkup.StatusSuccess {
		t.Fatalf("tags %+v", spans)
	}
	if !strings.HasPrefix(content, "I'll search the docs.\n\n<ToolCall") ||
		!strings.HasSuffix(content, "</ToolCall>\n\n"+`[{"id":"x"}] is JSON; clients resume with Last-Event-ID [1].`) {
		t.Errorf("content %q", content)
	}
	if len(bodies) != 2 || !strings.Contains(bodies[1], `"tool_result"`) || !strings.Contains(bodies[1], "toolu_01T1x1fJ34qAmk2tNTrN7Up6") {
		t.Errorf("second request lacks the tool result: %s", bodies[len(bodies)-1])
	}
}
