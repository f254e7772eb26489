package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/app"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// TestTUIModel: /model lists the server's models, /model ID answers the
// next question with that model, and an unknown id says so and sends
// nothing. /regenerate MODEL and /retry MODEL answer the last question
// again by another model, and an unknown one names the valid ids.
func TestTUIModel(t *testing.T) {
	// A pace at which an answer can be cancelled, to be retried.
	srv := testserver.Start(t, testserver.Options{DemoDelay: 30 * time.Millisecond, Models: []app.ModelConfig{
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
	answers := func() string {
		t.Helper()
		var models []string
		for _, m := range onlyConversation(t, srv.URL).Messages {
			if m.Role == toolmark.RoleAssistant {
				models = append(models, m.Model)
			}
		}
		return strings.Join(models, " ")
	}
	if got := answers(); got != "deep" {
		t.Errorf("answers by %v, want one by deep", got)
	}

	tm.typeLine("/help")
	help := tm.waitText("Commands")
	for _, want := range []string{"/retry [MODEL]  answer a failed or stopped question again (by MODEL)", "/regenerate [MODEL]  write the last answer again (by MODEL)"} {
		if !strings.Contains(help, want) {
			t.Errorf("the help lacks %q:\n%s", want, help)
		}
	}
	tm.keys("Escape")
	tm.waitFor("the chat again", func(s string) bool { return !strings.Contains(s, "Commands") })
	tm.typeLine("/regenerate llama")
	tm.waitText("There is no model llama — use one of: quick, deep.")
	tm.typeLine("/regenerate quick")
	tm.waitFor("the answer by quick", func(s string) bool { return strings.Contains(s, "quick · ") && !strings.Contains(s, "deep · ") })
	if got := answers(); got != "quick" {
		t.Errorf("after /regenerate quick: answers by %v, want quick", got)
	}

	tm.typeLine("/retry deep")
	tm.waitText("The last answer completed: /regenerate writes it again.")
	tm.typeLine("Compare resuming with cancelling, and explain snapshots.")
	tm.waitFor("a tool call", func(s string) bool { return spinnerRE.MatchString(s) })
	tm.keys("C-c")
	tm.waitText("Answer cancelled")
	tm.typeLine("/retry deep")
	tm.waitFor("the retried answer by deep", func(s string) bool {
		return strings.Contains(s, "deep · ") && !strings.Contains(s, "Answer cancelled")
	})
	if got := answers(); got != "quick deep" {
		t.Errorf("after /retry deep: answers by %v, want quick deep", got)
	}
}
