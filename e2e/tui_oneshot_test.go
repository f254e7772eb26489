package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// TestChatEmptyMessage: an empty message is a usage error (exit 2) with
// one sentence on stderr, piped or in a terminal, and sends nothing.
func TestChatEmptyMessage(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	for _, args := range [][]string{{"-m", ""}, {"-m", "  \n"}, {""}} {
		code, stdout, stderr := runChat(t, srv.URL, "What is a lease?\n", args...)
		if code != 2 {
			t.Errorf("%q: exit %d, want 2\nstdout:\n%s\nstderr:\n%s", args, code, stdout, stderr)
		}
		if msg := strings.TrimSpace(stderr); strings.Contains(msg, "\n") || !strings.Contains(msg, "the message is empty") || strings.Contains(msg, "http") {
			t.Errorf("%q: stderr is not one sentence on the empty message:\n%s", args, stderr)
		}
		if stdout != "" {
			t.Errorf("%q: stdout %q", args, stdout)
		}
	}
	if convs, err := client.New(srv.URL).ListConversations(context.Background()); err != nil || len(convs) != 0 {
		t.Errorf("conversations %v, %v: an empty -m sent something", convs, err)
	}

	tm := startTerm(t, srv.URL, 100, 20, "-m", "")
	screen := tm.waitText("EXIT=")
	if !strings.Contains(screen, "EXIT=2") || !strings.Contains(screen, "the message is empty") {
		t.Errorf("in a terminal, -m \"\" did not stop with the usage error:\n%s", screen)
	}
}

// TestTUIOneShotRendered: toolmark chat -m in a terminal prints the answer
// rendered as the full-screen client renders it — no markdown markers,
// colours of the style asked for — and never a spinner glyph, which could
// not turn there.
func TestTUIOneShotRendered(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 2 * time.Millisecond})
	const question = "How does a client resume the event stream?"
	captures := map[string]string{}
	run := func(o termOptions) (*term, string) {
		tm := startTermWith(t, srv.URL, 100, 50, o, "-m", question)
		return tm, tm.waitText("EXIT=")
	}
	for _, style := range []string{"dark", "light"} {
		tm, screen := run(termOptions{env: []string{"GLAMOUR_STYLE=" + style}})
		if !strings.Contains(screen, "EXIT=0") {
			t.Fatalf("%s: the answer did not complete:\n%s", style, screen)
		}
		for _, want := range []string{"✓ Found", question, "Sources:", "/api/turns/{id}/events"} {
			if !strings.Contains(screen, want) {
				t.Errorf("%s: the screen lacks %q:\n%s", style, want, screen)
			}
		}
		for _, raw := range []string{"**" + question, "`GET", "*(offline"} {
			if strings.Contains(screen, raw) {
				t.Errorf("%s: the screen shows raw markdown %q:\n%s", style, raw, screen)
			}
		}
		if spinnerRE.MatchString(tm.rawOutput()) {
			t.Errorf("%s: a spinner glyph was printed:\n%s", style, screen)
		}
		captures[style] = tm.screenANSI()
		if !strings.Contains(captures[style], "\x1b[") {
			t.Errorf("%s: the answer has no colours:\n%q", style, captures[style])
		}
	}
	if captures["dark"] == captures["light"] {
		t.Fatal("GLAMOUR_STYLE=light and dark print the same colours")
	}

	// Without GLAMOUR_STYLE the terminal's background picks the style.
	for style, bg := range map[string]string{"dark": "#000000", "light": "#ffffff"} {
		tm, _ := run(termOptions{background: bg})
		// The conversation's id differs: compare from the answer on.
		got, want := fromAnswer(tm.screenANSI()), fromAnswer(captures[style])
		if got != want {
			t.Errorf("on a %s background the answer is not in the %s style:\n%s\nwant:\n%s", bg, style, got, want)
		}
	}
}

// fromAnswer is a screen from its first tool-call line on.
func fromAnswer(screen string) string {
	if i := strings.Index(screen, "Searching"); i >= 0 {
		return screen[i:]
	}
	return screen
}
