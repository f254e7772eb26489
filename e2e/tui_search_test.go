package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// TestTUIListAndSearch: at 60 columns /list keeps each conversation's whole
// date (the title gives way), and /search marks the text found in each
// snippet.
func TestTUIListAndSearch(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	c := client.New(srv.URL)
	ctx := context.Background()
	if _, err := c.Chat(ctx, "", "A rather long question about what a quokka lease means in this system?"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat(ctx, "", "How does resume work?"); err != nil {
		t.Fatal(err)
	}
	tm := startTerm(t, srv.URL, 60, 30)
	tm.waitText("offline demo model")
	tm.typeLine("/list")
	screen := tm.waitText("Conversations")
	date := regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d`)
	if n := len(date.FindAllString(screen, -1)); n != 2 {
		t.Errorf("at 60 columns /list shows %d whole dates, want 2:\n%s", n, screen)
	}
	tm.keys("Escape")
	tm.waitFor("the chat again", func(s string) bool { return !strings.Contains(s, "Conversations") })
	tm.typeLine("/search Quokka")
	tm.waitText("Conversations holding")
	// The match is set in reverse video (SGR 7), as written in the snippet.
	marked := regexp.MustCompile(`\x1b\[(?:[0-9]*;)*7(?:;[0-9]*)*m(?:\x1b\[[0-9;]*m)*quokka`)
	if ansi := tm.screenANSI(); !marked.MatchString(ansi) {
		t.Errorf("the snippet's match is not marked:\n%q", ansi)
	}
}

// TestTUISearchHitOpensAtMatch: in a 34-turn conversation (more than the
// first page), opening the search hit of turn 3 reads the earlier pages,
// shows turn 3 rather than the end, and marks the match in it, at 120 and
// at 60 columns; the mark stays when the window is resized. (TestBrowserSearchHit is the page's.)
func TestTUISearchHitOpensAtMatch(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	c := client.New(srv.URL)
	ctx := context.Background()
	conv := ""
	for i := 1; i <= 34; i++ {
		q := fmt.Sprintf("Question %d: how does resume work?", i)
		if i == 3 {
			q = "Question 3: What does a quokka lease mean?"
		}
		r, err := c.Chat(ctx, conv, q)
		if err != nil {
			t.Fatal(err)
		}
		conv = r.ConversationID
	}
	marked := regexp.MustCompile(`(?i)\x1b\[(?:[0-9]*;)*7(?:;[0-9]*)*m(?:\x1b\[[0-9;]*m)*quokka`)
	for _, width := range []int{120, 60} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			tm := startTerm(t, srv.URL, width, 30)
			tm.waitText("offline demo model")
			tm.typeLine("/search Quokka")
			tm.waitText("Conversations holding")
			tm.keys("Enter")
			screen := tm.waitFor("turn 3 in view", func(s string) bool {
				return !strings.Contains(s, "Conversations holding") && strings.Contains(s, "Question 3:")
			})
			t.Logf("at %d columns:\n%s", width, screen)
			if strings.Contains(screen, "Question 34") {
				t.Errorf("the conversation opened at its end:\n%s", screen)
			}
			if ansi := tm.screenANSI(); !marked.MatchString(ansi) {
				t.Errorf("the match is not marked:\n%s", screen)
			}
			// A resize renders the turns anew: the mark stays.
			other := map[int]int{120: 90, 60: 75}[width]
			tm.tmux("resize-window", "-t", "t", "-x", fmt.Sprint(other), "-y", "30")
			before := screen
			tm.waitFor("the screen drawn anew", func(s string) bool { return s != before })
			prev := ""
			screen = tm.waitFor("a still screen", func(s string) bool { ok := s == prev; prev = s; return ok })
			t.Logf("resized to %d columns:\n%s", other, screen)
			if ansi := tm.screenANSI(); !marked.MatchString(ansi) {
				t.Errorf("the match lost its mark at %d columns:\n%s", other, screen)
			}
		})
	}
}
