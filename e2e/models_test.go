package e2e

import (
	"context"
	"encoding/json"
	"errors"
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
)

// twoModels starts the toolmark binary offering two models by
// TOOLMARK_MODELS: "gpt" (OpenAI-compatible, the default) and "claude"
// (Anthropic), each a local validating fake.
func twoModels(t *testing.T, ctx context.Context) (*client.Client, *fp.Server, *fp.Server) {
	t.Helper()
	openai := fp.Start(t, fp.OpenAI, fp.Reply{Text: []string{"Answer from ", "GPT."}, Input: 10, Output: 3})
	anthropic := fp.Start(t, fp.Anthropic, fp.Reply{Text: []string{"Answer from ", "Claude."}, Input: 12, Output: 4})
	models, _ := json.Marshal([]map[string]any{
		{"id": "gpt", "label": "GPT mini", "provider": "openai", "name": "gpt-4o-mini", "baseUrl": openai.BaseURL(), "apiKeyEnv": "FAKE_OPENAI_KEY", "images": true, "default": true},
		{"id": "claude", "label": "Claude Sonnet", "provider": "anthropic", "name": "claude-sonnet-4-5", "baseUrl": anthropic.BaseURL(), "apiKeyEnv": "FAKE_ANTHROPIC_KEY", "images": true, "documents": true},
	})
	env := append(os.Environ(), "TOOLMARK_MODEL_PROVIDER=", "OPENAI_BASE_URL=", "OPENAI_API_KEY=", "ANTHROPIC_API_KEY=", "ANTHROPIC_BASE_URL=",
		"FAKE_OPENAI_KEY="+fp.APIKey, "FAKE_ANTHROPIC_KEY="+fp.APIKey, "TOOLMARK_MODELS="+string(models))
	srv, err := bench.StartServer(ctx, bench.ServerConfig{Command: []string{testserver.Binary(t), "serve"}, DatabaseURL: pgtest.URL(t), Env: env, ModelFromEnv: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	return client.New(srv.URL), openai, anthropic
}

// TestSeveralModels: with an OpenAI-compatible and an Anthropic model, a
// conversation switches model between turns, a turn naming none keeps the
// conversation's last model, every answer names its model (turn, page,
// exports), and an unknown id is a 400 listing the valid ones.
func TestSeveralModels(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, openai, anthropic := twoModels(t, ctx)
	models, def, err := c.Models(ctx)
	if err != nil || def != "gpt" || len(models) != 2 || models[1] != (toolmark.ModelInfo{ID: "claude", Label: "Claude Sonnet", Provider: "anthropic", Images: true, Documents: true}) {
		t.Fatalf("models %+v default %q (%v)", models, def, err)
	}
	conv, err := c.CreateConversation(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var last string
	ask := func(model, want, wantText string) {
		t.Helper()
		ti, err := c.PostTurnInput(ctx, conv.ID, toolmark.TurnInput{Content: "Who answers?", Model: model}, "")
		if err != nil {
			t.Fatal(err)
		}
		if ti.Turn.Model != want {
			t.Errorf("turn asked of %q runs on %q, want %q", model, ti.Turn.Model, want)
		}
		last = ti.Turn.ID
		evs := followAll(t, c, ti.Turn.ID, 0)
		if end := evs[len(evs)-1]; end.Type != toolmark.EventTurnCompleted {
			t.Fatalf("turn ended with %s %s", end.Type, end.Data)
		}
		st, err := c.GetTurn(ctx, ti.Turn.ID)
		if err != nil || st.Content != wantText || st.Turn.Model != want {
			t.Errorf("turn on %q: %q by %q (%v), want %q", want, st.Content, st.Turn.Model, err, wantText)
		}
	}
	ask("", "gpt", "Answer from GPT.")
	ask("claude", "claude", "Answer from Claude.")
	ask("", "claude", "Answer from Claude.") // the conversation remembers its model
	ask("gpt", "gpt", "Answer from GPT.")
	if n, m := len(openai.Requests()), len(anthropic.Requests()); n != 2 || m != 2 {
		t.Errorf("the OpenAI service had %d requests and the Anthropic one %d, want 2 each", n, m)
	}
	for _, s := range []*fp.Server{openai, anthropic} {
		if p := s.Problems(); len(p) > 0 {
			t.Errorf("%s refused what toolmark sent: %v", s.Dialect, p)
		}
	}
	page, err := c.GetConversation(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, m := range page.Messages {
		if m.Role == toolmark.RoleAssistant {
			named = append(named, m.Model)
		} else if m.Model != "" {
			t.Errorf("a question names model %q", m.Model)
		}
	}
	if strings.Join(named, " ") != "gpt claude claude gpt" || page.Conversation.Model != "gpt" {
		t.Errorf("answers by %v, conversation's model %q; want gpt claude claude gpt, gpt", named, page.Conversation.Model)
	}
	md, _, err := c.ExportConversation(ctx, conv.ID, "markdown")
	if err != nil || strings.Count(string(md), " · model claude") != 2 || strings.Count(string(md), " · model gpt") != 2 {
		t.Errorf("the Markdown export does not name each answer's model (%v):\n%s", err, md)
	}
	js, _, err := c.ExportConversation(ctx, conv.ID, "json")
	if err != nil || strings.Count(string(js), `"model":"claude"`) < 2 {
		t.Errorf("the JSON export does not name each answer's model (%v):\n%s", err, js)
	}
	_, err = c.PostTurnInput(ctx, conv.ID, toolmark.TurnInput{Content: "hi", Model: "llama"}, "")
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Code != toolmark.EINVALID || !strings.Contains(apiErr.Message, "gpt, claude") {
		t.Errorf("an unknown model: %v, want a 400 EINVALID naming gpt, claude", err)
	}
	if _, err := c.RegenerateTurnOn(ctx, last, "llama", ""); client.ErrorCode(err) != toolmark.EINVALID {
		t.Errorf("regenerating on an unknown model: %v, want EINVALID", err)
	}
	// Regenerated by the other model.
	ti, err := c.RegenerateTurnOn(ctx, last, "claude", "")
	if err != nil || ti.Turn.Model != "claude" {
		t.Fatalf("regenerated on %q (%v), want claude", ti.Turn.Model, err)
	}
	followAll(t, c, ti.Turn.ID, 0)
	if st, err := c.GetTurn(ctx, ti.Turn.ID); err != nil || st.Content != "Answer from Claude." {
		t.Errorf("the regenerated answer: %q (%v)", st.Content, err)
	}
}
