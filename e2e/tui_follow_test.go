package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// TestTUIFollowsTurnsStartedElsewhere: a turn started in the page (the
// API) on the conversation open in the terminal shows there while it is
// written, question and running answer; and a send the server refuses
// because such an answer is being written follows that answer, the
// message kept in the composer.
func TestTUIFollowsTurnsStartedElsewhere(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 100 * time.Millisecond})
	c := client.New(srv.URL)
	ctx := context.Background()
	cv, err := c.CreateConversation(ctx, "Leases")
	if err != nil {
		t.Fatal(err)
	}
	ti, err := c.PostTurn(ctx, cv.ID, "What is a lease?", "")
	if err != nil {
		t.Fatal(err)
	}
	tm := startTerm(t, srv.URL, 120, 50, "--conversation", cv.ID)
	waitAnswers(t, tm, c, cv.ID, func(p client.ConversationPage) bool {
		return len(p.Messages) == 2 && p.Messages[1].Status == toolmark.MessageComplete
	})
	tm.waitText("› What is a lease?")
	tm.waitFor("the answer shown whole", func(s string) bool { return !spinnerRE.MatchString(s) })

	// Started in the page: shown and followed live.
	ti, err = c.PostTurn(ctx, cv.ID, "Research how cancellation works; what happens after a crash?", "")
	if err != nil {
		t.Fatal(err)
	}
	tm.waitFor("the turn started elsewhere, followed", func(s string) bool {
		return strings.Contains(s, "› Research how cancellation works") && (spinnerRE.MatchString(s) || strings.Contains(s, "Thinking"))
	})
	waitAnswers(t, tm, c, cv.ID, func(p client.ConversationPage) bool {
		return len(p.Messages) == 4 && p.Messages[3].Status == toolmark.MessageComplete
	})
	screen := tm.waitFor("the followed answer ended", func(s string) bool { return !spinnerRE.MatchString(s) })
	if !strings.Contains(screen, "› What is a lease?") {
		t.Errorf("the earlier question is gone after following a turn started elsewhere:\n%s", screen)
	}

	// A turn started while the terminal looks at its list is not followed
	// from there; a send back in the conversation is refused and follows
	// it. (The watch may tell the turn only once the list is left: then
	// the terminal follows it at once, and the turn is stopped and the
	// round tried again.)
	for round := 1; ; round++ {
		q := fmt.Sprintf("Research how resume works after restart %d?", round)
		tm.typeLine("/list")
		tm.waitText("Conversations")
		ti, err = c.PostTurn(ctx, cv.ID, q, "")
		if err != nil {
			t.Fatal(err)
		}
		tm.keys("Escape")
		tm.waitFor("back in the conversation", func(s string) bool { return !strings.Contains(s, "Conversations") })
		if round < 3 && strings.Contains(tm.screen(), "› "+q) {
			c.CancelTurn(ctx, ti.Turn.ID)
			waitAnswers(t, tm, c, cv.ID, func(p client.ConversationPage) bool {
				return p.Messages[len(p.Messages)-1].Status != toolmark.MessageStreaming
			})
			tm.waitFor("the stopped answer", func(s string) bool { return !spinnerRE.MatchString(s) })
			continue
		}
		tm.typeLine("What is a snapshot?")
		screen = tm.waitFor("the refused send following the running answer", func(s string) bool {
			return strings.Contains(s, "following it") && strings.Contains(s, "› "+q)
		})
		// The composer holds the message, and it is not among the questions.
		if n := strings.Count(screen, "› What is a snapshot?"); n != 1 {
			t.Errorf("the refused message shows %d times (want once, in the composer):\n%s", n, screen)
		}
		break
	}
}
