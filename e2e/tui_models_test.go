package e2e

import (
	"strings"
	"testing"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/app"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// TestTUIModel: /model lists the server's models, /model ID answers the
// next question with that model, and an unknown id says so and sends
// nothing.
func TestTUIModel(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{Models: []app.ModelConfig{
		{ID: "quick", Label: "Quick demo", Provider: "demo", Default: true},
		{ID: "deep", Label: "Deep demo", Provider: "demo"},
	}})
	tm := startTerm(t, srv.URL, 100, 30)
	tm.waitText("/help")
	tm.typeLine("/model")
	tm.waitText("quick (Quick demo) default, deep (Deep demo)")
	tm.typeLine("/model llama")
	tm.waitText("There is no model llama")
	tm.typeLine("/model deep")
	tm.waitText("The next answers come from Deep demo.")
	tm.typeLine("What is a lease?")
	tm.waitText("Sources:")
	tm.waitText("deep · ") // the answer names its model
	cv := onlyConversation(t, srv.URL)
	var models []string
	for _, m := range cv.Messages {
		if m.Role == toolmark.RoleAssistant {
			models = append(models, m.Model)
		}
	}
	if strings.Join(models, " ") != "deep" {
		t.Errorf("answers by %v, want one by deep", models)
	}
}
