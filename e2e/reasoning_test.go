package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/internal/app"
	fp "github.com/toolmark/toolmark/internal/harness/fakeprovider"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// hostileThinking is thinking that tries to be markup and terminal
// control: the page and the terminal must show it as text.
var hostileThinking = []string{"Let me think: <img src=x onerror=alert(1)> ", "<b>bold?</b> \x1b[31mred\x1b[0m then search."}

// thinkingModel starts a local service of dialect d whose model thinks
// before a tool call and before its answer, in each of two turns, and a
// server answering with it.
func thinkingModel(t *testing.T, d fp.Dialect, thinking []string) (*fp.Server, *testserver.Server) {
	t.Helper()
	call := func(id string) fp.Reply {
		return fp.Reply{Thinking: thinking, Redacted: d == fp.AnthropicThinking, Input: 50, Output: 20,
			Calls: []fp.Call{{ID: id, Name: "search_documents", Args: []string{`{"query": "resume"}`}}}}
	}
	answer := fp.Reply{Thinking: []string{"The docs say how."}, Text: []string{"Clients resume with Last-Event-ID."}}
	model := fp.Start(t, d, call("call_r1"), answer, call("call_r2"), answer)
	cfg := &app.ModelConfig{Provider: "openai", BaseURL: model.BaseURL(), APIKey: fp.APIKey, Name: "deepseek-reasoner"}
	if d.Anthropic() {
		cfg = &app.ModelConfig{Provider: "anthropic", BaseURL: model.BaseURL(), APIKey: fp.APIKey, Name: "claude-sonnet-4-5"}
	}
	return model, testserver.Start(t, testserver.Options{Model: cfg})
}

// TestReasoningEndToEnd: through the whole server (runner, store, history
// read back from PostgreSQL), a reasoning model's tool turn and a second
// one with the first in its history complete against services that refuse
// a dropped or altered reasoning item; the stored messages show the
// thinking's text and duration and never the provider's signatures.
func TestReasoningEndToEnd(t *testing.T) {
	for _, d := range []fp.Dialect{fp.DeepSeek, fp.Gemini, fp.AnthropicThinking} {
		t.Run(string(d), func(t *testing.T) {
			var thinking []string
			if d != fp.Gemini {
				thinking = []string{"The user asks about resume; ", "search first."}
			}
			model, srv := thinkingModel(t, d, thinking)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c := client.New(srv.URL)
			conv, err := c.CreateConversation(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{"How does resume work?", "And again?"} {
				ti, err := c.PostTurn(ctx, conv.ID, q, "")
				if err != nil {
					t.Fatal(err)
				}
				evs := followAll(t, c, ti.Turn.ID, 0)
				if last := evs[len(evs)-1]; last.Type != toolmark.EventTurnCompleted {
					t.Fatalf("%q ended with %s %s (refused: %v)", q, last.Type, last.Data, model.Problems())
				}
			}
			if p := model.Problems(); len(p) > 0 {
				t.Fatalf("the service refused what toolmark sent: %v", p)
			}
			page, err := c.GetConversation(ctx, conv.ID)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(page)
			for _, m := range page.Messages {
				if m.Role != toolmark.RoleAssistant {
					continue
				}
				if m.Reasoning == nil || d != fp.Gemini && !strings.Contains(m.Reasoning.Text, "search first.") {
					t.Errorf("stored message's reasoning %+v", m.Reasoning)
				}
			}
			if strings.Contains(string(raw), "signature") || strings.Contains(string(raw), "EmwKAhgB") {
				t.Errorf("the conversation's JSON gives away the provider's reasoning items: %s", raw)
			}
		})
	}
}

// TestBrowserReasoning: the page folds a model's thinking above its answer
// ("Thought for 1 s"), live and after a reload; opened, the thinking shows
// as text, its markup inert.
func TestBrowserReasoning(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	_, srv := thinkingModel(t, fp.AnthropicThinking, hostileThinking)
	runScript(t, "reasoning.mjs", srv.URL)
}

// TestTUIReasoning: the terminal client folds the thinking to one line,
// live and when the conversation is opened again; the expanded view
// (Ctrl-O) shows it, sanitised: no colour of the model's reaches the
// screen.
func TestTUIReasoning(t *testing.T) {
	_, srv := thinkingModel(t, fp.AnthropicThinking, hostileThinking)
	tm := startTerm(t, srv.URL, 110, 40)
	tm.waitFor("the composer", func(s string) bool { return strings.Contains(s, "›") || strings.Contains(s, "Ask") })
	tm.typeLine("How does resume work?")
	tm.waitFor("the answer", func(s string) bool { return strings.Contains(s, "Clients resume with Last-Event-ID.") })
	live := tm.waitFor("the folded thinking", func(s string) bool { return strings.Contains(s, "▸ Thought for 1 s") })
	if strings.Contains(live, "onerror") {
		t.Errorf("the folded thinking shows its text:\n%s", live)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	convs, err := client.New(srv.URL).ListConversations(ctx)
	if err != nil || len(convs) == 0 {
		t.Fatalf("conversations %v (%v)", convs, err)
	}
	again := startTerm(t, srv.URL, 110, 40, "--conversation", convs[0].ID)
	again.waitFor("the stored answer's fold", func(s string) bool {
		return strings.Contains(s, "▸ Thought for 1 s") && strings.Contains(s, "Clients resume with Last-Event-ID.")
	})
	again.keys("C-o")
	open := again.waitFor("the thinking unfolded", func(s string) bool { return strings.Contains(s, "▾ Thought for") })
	if !strings.Contains(open, "<img src=x onerror=alert(1)>") || !strings.Contains(open, "<b>bold?</b>") {
		t.Errorf("the unfolded thinking is not the model's text:\n%s", open)
	}
	if ansi := again.screenANSI(); strings.Contains(ansi, "\x1b[31mred") {
		t.Errorf("the model's colour reached the terminal")
	}
	if dir := os.Getenv("TOOLMARK_SCREENSHOTS"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "tui-reasoning.txt"), []byte(live+"\n----\n"+open), 0o644)
	}
}
