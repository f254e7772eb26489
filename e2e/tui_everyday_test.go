package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// paste pastes text as a terminal does (bracketed, when the client asked
// for it).
func (tm *term) paste(text string) {
	tm.tmux("set-buffer", "-b", "p", "--", text)
	tm.tmux("paste-buffer", "-p", "-d", "-b", "p", "-t", "t")
}

// TestTUIComposer: a paste lands in the composer whole; Alt+Enter adds a
// line; a message of several lines is sent as one; unknown commands and
// commands without their argument say so instead of reaching the model;
// /help shows the help; at 60 columns the hints keep the commands.
func TestTUIComposer(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	tm := startTerm(t, srv.URL, 60, 30)
	screen := tm.waitText("offline demo model")
	for _, want := range []string{"/list", "/new", "/help", "/quit"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the hints at 60 columns lack %s:\n%s", want, screen)
		}
	}
	tm.paste("What is a lease?")
	tm.waitText("What is a lease?")
	tm.keys("M-Enter")
	tm.tmux("send-keys", "-t", "t", "-l", "And a snapshot?")
	screen = tm.waitText("And a snapshot?")
	if strings.Contains(screen, "Sources:") {
		t.Fatalf("Alt+Enter sent the message:\n%s", screen)
	}
	tm.keys("Enter")
	tm.waitText("Sources:")
	cv := onlyConversation(t, srv.URL)
	if got := cv.Messages[0].Content; got != "What is a lease?\nAnd a snapshot?" {
		t.Errorf("sent %q, want the paste and the second line", got)
	}
	if cv.Conversation.Title != "What is a lease?" {
		t.Errorf("title %q, want the server's title of the first line", cv.Conversation.Title)
	}

	tm.typeLine("/frobnicate now")
	tm.waitText("There is no command /frobnicate")
	tm.keys("C-c") // clears the line
	tm.typeLine("/open")
	tm.waitText("Usage: /open ID")
	tm.keys("C-c")
	tm.typeLine("/help")
	screen = tm.waitText("Commands")
	for _, want := range []string{"/retry", "/edit", "/rename", "/search", "/export", "Ctrl-O"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the help lacks %s:\n%s", want, screen)
		}
	}
	tm.keys("Escape")
	tm.waitFor("the chat again", func(s string) bool { return !strings.Contains(s, "Commands") && strings.Contains(s, "Sources:") })
	if n, _ := client.New(srv.URL).ListConversations(context.Background()); len(n) != 1 {
		t.Errorf("a command reached the model: %d conversations", len(n))
	}
}

// TestTUIEverydayActions: /rename, /search, /regenerate, /edit, /retry and
// /export in the terminal, against a real server.
func TestTUIEverydayActions(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 5 * time.Millisecond})
	dir := t.TempDir()
	tm := startTerm(t, srv.URL, 110, 40)
	tm.waitText("offline demo model")
	tm.typeLine("How does resume work?")
	tm.waitText("Sources:")
	c := client.New(srv.URL)
	ctx := context.Background()
	convs, _ := c.ListConversations(ctx)
	conv := convs[0].ID

	tm.typeLine("/rename Resume notes")
	tm.waitText("Renamed the conversation.")
	if cv, _ := c.GetConversation(ctx, conv); cv.Conversation.Title != "Resume notes" {
		t.Errorf("title %q after /rename", cv.Conversation.Title)
	}
	tm.typeLine("/search last-event")
	screen := tm.waitText("Conversations holding")
	if !strings.Contains(screen, conv) || !strings.Contains(screen, "Resume notes") {
		t.Errorf("the search lacks the conversation (its whole id):\n%s", screen)
	}
	tm.keys("Escape")
	tm.waitFor("the chat again", func(s string) bool { return !strings.Contains(s, "Conversations holding") })

	before, _ := c.GetConversation(ctx, conv)
	tm.typeLine("/regenerate")
	waitAnswers(t, tm, c, conv, func(cv client.ConversationPage) bool {
		return len(cv.Messages) == 2 && cv.Messages[1].ID != before.Messages[1].ID && cv.Messages[1].Status == toolmark.MessageComplete
	})
	tm.typeLine("/edit What happens on cancellation?")
	waitAnswers(t, tm, c, conv, func(cv client.ConversationPage) bool {
		return len(cv.Messages) == 2 && cv.Messages[0].Content == "What happens on cancellation?" && cv.Messages[1].Status == toolmark.MessageComplete
	})
	screen = tm.waitText("What happens on cancellation?")
	if strings.Contains(screen, "How does resume work?") {
		t.Errorf("the replaced question still shows:\n%s", screen)
	}
	tm.typeLine("/retry")
	tm.waitText("The last answer completed: /regenerate writes it again.")

	file := filepath.Join(dir, "notes.md")
	tm.typeLine("/export " + file)
	tm.waitText("Saved the conversation to")
	b, err := os.ReadFile(file)
	if err != nil || !strings.HasPrefix(string(b), "# Resume notes") {
		t.Errorf("export: %v\n%s", err, b)
	}
}

// waitAnswers polls a conversation until ok holds.
func waitAnswers(t *testing.T, tm *term, c *client.Client, conv string, ok func(client.ConversationPage) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		cv, err := c.GetConversation(context.Background(), conv)
		if err == nil && ok(cv) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the conversation never came to the state wanted (%v); the screen shows:\n%s", err, tm.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTUIBusyAndExpanded: while an answer is written, a refused command
// leaves nothing in the composer and its notice goes with the answer; in
// the expanded view Ctrl-C says it cancels, a resize keeps the snapshot,
// and the snapshot shows no spinner.
func TestTUIBusyAndExpanded(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 60 * time.Millisecond})
	tm := startTerm(t, srv.URL, 110, 45)
	tm.waitText("offline demo model")
	tm.typeLine("Compare resuming with cancelling, and explain snapshots.")
	tm.waitFor("a tool call", func(s string) bool { return spinnerRE.MatchString(s) })
	tm.typeLine("/new")
	tm.waitText("An answer is being written")
	tm.tmux("send-keys", "-t", "t", "-l", "next")
	screen := tm.waitText("next")
	if strings.Contains(screen, "/newnext") || strings.Contains(screen, "/new next") {
		t.Errorf("the refused /new stayed in the composer:\n%s", screen)
	}
	tm.keys("C-c") // a turn runs: Ctrl-C cancels it
	tm.waitText("Answer cancelled")
	tm.waitFor("the notice gone with the answer", func(s string) bool { return !strings.Contains(s, "An answer is being written") })
	tm.keys("C-c") // now it clears the line
	tm.waitFor("an empty composer", func(s string) bool { return !strings.Contains(s, "› next") })

	tm.typeLine("Research how crash recovery works")
	tm.waitFor("a tool call", func(s string) bool { return toolLineRE.MatchString(s) && spinnerRE.MatchString(s) })
	tm.keys("C-o")
	frozen := tm.waitText(expandedMarker)
	if spinnerRE.MatchString(frozen) {
		t.Errorf("the snapshot shows a spinner:\n%s", frozen)
	}
	tm.tmux("resize-window", "-t", "t", "-x", "90", "-y", "45")
	time.Sleep(500 * time.Millisecond)
	after := tm.waitText(expandedMarker)
	if strings.Count(after, "✓")+strings.Count(after, "✗") != strings.Count(frozen, "✓")+strings.Count(frozen, "✗") {
		t.Errorf("the resize took another snapshot:\nbefore:\n%s\nafter:\n%s", frozen, after)
	}
	tm.keys("C-c")
	tm.waitFor("the cancel said in the expanded view", func(s string) bool {
		return strings.Contains(s, "Cancelling the answer") || strings.Contains(s, "The answer was cancelled")
	})
}
