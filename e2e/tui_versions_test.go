package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// TestTUIVersions: /regenerate in a conversation started in the session
// keeps the earlier turns on screen and shows ‹ 2/2 › under the question;
// an earlier question edited elsewhere (the page) shows ‹ 2/2 › once the
// conversation is opened, and /version 1 brings the first branch back
// whole, the question after it included.
func TestTUIVersions(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 20 * time.Millisecond})
	tm := startTerm(t, srv.URL, 120, 150) // tall enough to show the three turns
	tm.waitText("offline demo model")
	c := client.New(srv.URL)
	ctx := context.Background()
	qs := []string{"What is a lease?", "How does resume work?", "What is a snapshot?"}
	var conv string
	for i, q := range qs {
		tm.typeLine(q)
		if conv == "" {
			for deadline := time.Now().Add(20 * time.Second); conv == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				if convs, _ := c.ListConversations(ctx); len(convs) == 1 {
					conv = convs[0].ID
				}
			}
		}
		waitAnswers(t, tm, c, conv, func(cv client.ConversationPage) bool {
			return len(cv.Messages) == 2*(i+1) && cv.Messages[2*i+1].Status == toolmark.MessageComplete
		})
	}

	tm.typeLine("/regenerate")
	// While it is written (a spinner) or once it is (under load the
	// answer may be whole before the screen is read): never without the
	// earlier questions.
	screen := tm.waitFor("the answer written again", func(s string) bool {
		return spinnerRE.MatchString(s) || strings.Contains(s, "Thinking") || strings.Contains(s, "‹ 2/2 ›")
	})
	for _, q := range qs {
		if !strings.Contains(screen, "› "+q) {
			t.Errorf("while /regenerate writes the answer, the question %q is gone from the screen:\n%s", q, screen)
		}
	}
	screen = tm.waitText("‹ 2/2 ›")
	for _, q := range qs {
		if !strings.Contains(screen, "› "+q) {
			t.Errorf("after /regenerate the question %q is gone from the screen:\n%s", q, screen)
		}
	}

	// The second question edited in the page.
	cv, err := c.GetConversation(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	first := cv.Messages[2]
	ti, err := c.EditMessage(ctx, first.ID, "How does cancellation work?", "")
	if err != nil {
		t.Fatal(err)
	}
	waitAnswers(t, tm, c, conv, func(cv client.ConversationPage) bool {
		return len(cv.Messages) == 4 && cv.Messages[3].TurnID == ti.Turn.ID && cv.Messages[3].Status == toolmark.MessageComplete
	})
	tm.typeLine("/open " + conv)
	screen = tm.waitText("How does cancellation work?")
	if !strings.Contains(screen, "‹ 2/2 ›") || strings.Contains(screen, "What is a snapshot?") {
		t.Errorf("the edited conversation:\n%s", screen)
	}
	tm.typeLine("/version 1")
	screen = tm.waitFor("the first branch", func(s string) bool { return strings.Contains(s, "› What is a snapshot?") })
	for _, q := range qs {
		if !strings.Contains(screen, "› "+q) {
			t.Errorf("version 1 lacks %q:\n%s", q, screen)
		}
	}
	if !strings.Contains(screen, "‹ 1/2 ›") || strings.Contains(screen, "How does cancellation work?") {
		t.Errorf("version 1:\n%s", screen)
	}
	if cv, _ := c.GetConversation(ctx, conv); len(cv.Messages) != 6 || cv.Messages[2].ID != first.ID {
		t.Errorf("the server's branch after /version 1: %d messages", len(cv.Messages))
	}
	tm.typeLine("/version 3")
	tm.waitText("Usage: /version N, N from 1 to 2.")
}
