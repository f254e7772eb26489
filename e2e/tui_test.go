package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/internal/harness/testserver"
	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// term is the terminal client running in a tmux pane of a tmux server of
// its own: the test types with send-keys and reads the screen with
// capture-pane, as a user would.
type term struct {
	t      *testing.T
	socket string
	raw    string // every byte the client wrote to the terminal
}

var termCount atomic.Int32

// startTerm runs "toolmark chat --server url args…" in a w×h tmux pane.
// When the client exits, the pane shows "EXIT=<code>".
func startTerm(t *testing.T, url string, w, h int, args ...string) *term {
	t.Helper()
	return startTermWith(t, url, w, h, termOptions{}, args...)
}

// termOptions set up the terminal of startTermWith.
type termOptions struct {
	env        []string // environment variables of the client, NAME=value
	background string   // the terminal's background colour ("#ffffff"), which tmux tells a client that asks
}

// startTermWith is startTerm in a terminal set up as o says.
func startTermWith(t *testing.T, url string, w, h int, o termOptions, args ...string) *term {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed")
		}
		t.Skip("tmux is not installed")
	}
	dir := t.TempDir()
	tm := &term{t: t, socket: fmt.Sprintf("toolmark-e2e-%d-%d", os.Getpid(), termCount.Add(1)), raw: filepath.Join(dir, "raw")}
	script := filepath.Join(dir, "run.sh")
	var quoted []string
	for _, a := range append([]string{toolmarkBin(t), "chat", "--server", url}, args...) {
		quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	exports := "export TOOLMARK_SERVER= TOOLMARK_TOKEN="
	for _, e := range o.env {
		exports += " '" + strings.ReplaceAll(e, "'", `'\''`) + "'"
	}
	body := exports + "\n" + strings.Join(quoted, " ") + "\necho \"EXIT=$?\"\nsleep 600\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	tm.tmux("new-session", "-d", "-s", "t", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "sh -c 'read go; exec sh "+script+"'")
	t.Cleanup(func() { exec.Command("tmux", "-L", tm.socket, "kill-server").Run() })
	tm.tmux("pipe-pane", "-o", "-t", "t", "cat >> "+tm.raw)
	if o.background != "" {
		tm.tmux("set-option", "-g", "window-style", "bg="+o.background)
	}
	tm.tmux("send-keys", "-t", "t", "Enter")
	return tm
}

func (tm *term) tmux(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", tm.socket}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// screen returns what the pane shows now (-e: with its colours).
func (tm *term) screen() string { return tm.tmux("capture-pane", "-p", "-t", "t") }

func (tm *term) screenANSI() string { return tm.tmux("capture-pane", "-p", "-e", "-t", "t") }

// keys types keys (tmux key names: Enter, C-c, C-o).
func (tm *term) keys(keys ...string) { tm.tmux(append([]string{"send-keys", "-t", "t"}, keys...)...) }

// typeLine types text literally and presses Enter.
func (tm *term) typeLine(text string) {
	tm.tmux("send-keys", "-t", "t", "-l", text)
	tm.keys("Enter")
}

// waitFor polls the screen until ok holds, and returns that screen.
func (tm *term) waitFor(what string, ok func(string) bool) string {
	tm.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := tm.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("waiting for %s; the screen shows:\n%s", what, s)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

func (tm *term) waitText(text string) string {
	tm.t.Helper()
	return tm.waitFor(fmt.Sprintf("%q", text), func(s string) bool { return strings.Contains(s, text) })
}

func (tm *term) rawOutput() string {
	b, _ := os.ReadFile(tm.raw)
	return string(b)
}

// expandedMarker is the status line of the expanded view.
const expandedMarker = "expanded view — a snapshot"

var spinnerRE = regexp.MustCompile(`[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]`)

// toolLineRE matches a collapsed tool line: its mark and its status text.
var toolLineRE = regexp.MustCompile(`(?m)^\s*([⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏✓✗⊘]) (.+)$`)

// argsRE matches a call's arguments written out, which the collapsed view
// leaves to the expanded one.
var argsRE = regexp.MustCompile(`\b(task|step|query|url)=|\{"`)

// TestTUILive follows one turn in the full-screen client: a status line
// before the first token, each call's line in the page's status text (its
// arguments in the expanded view only), the expanded view frozen while the
// turn streams and live again on switching back, and one final mark per
// tool call at the end.
func TestTUILive(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 80 * time.Millisecond})
	tm := startTerm(t, srv.URL, 120, 60)
	tm.waitText("offline demo model")
	tm.typeLine("Compare resuming with cancelling, and explain snapshots.")

	// The status line shows before the first token of the answer.
	first := tm.waitFor("a status line", func(s string) bool {
		return strings.Contains(s, "Thinking…") || strings.Contains(s, "Starting a sub-agent") || strings.Contains(s, "Sub-agent working")
	})
	if strings.Contains(first, "no language model is configured") {
		t.Errorf("the answer had begun when the status line showed:\n%s", first)
	}

	// While its arguments stream and it runs, a call's line says what the
	// page says of it; its arguments are left to the expanded view.
	tm.waitFor("a sub-agent's line", func(s string) bool {
		if m := argsRE.FindString(s); m != "" {
			t.Fatalf("the collapsed view shows arguments (%q):\n%s", m, s)
		}
		return regexp.MustCompile(`(?m)^\s*[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Sub-agent working on: Look up `).MatchString(s)
	})

	// The expanded view is a snapshot: nothing changes while the turn goes on.
	c := client.New(srv.URL)
	turnID := activeTurn(t, c)
	before := mustTurn(t, c, turnID)
	tm.keys("C-o")
	frozen := tm.waitText(expandedMarker)
	if !strings.Contains(frozen, "parameters") {
		t.Errorf("the expanded view shows no parameters:\n%s", frozen)
	}
	for st := mustTurn(t, c, turnID); st.Seq < before.Seq+10 && !st.Turn.Status.Final(); st = mustTurn(t, c, turnID) {
		time.Sleep(20 * time.Millisecond)
	}
	if now := tm.screen(); now != frozen {
		t.Errorf("the expanded view changed while the turn streamed:\nbefore:\n%s\nafter:\n%s", frozen, now)
	}
	// Back to the live view: it shows the turn as it is now.
	tm.keys("C-o")
	tm.waitFor("the live view", func(s string) bool { return !strings.Contains(s, expandedMarker) && s != frozen })

	final := waitFinal(t, c, turnID, time.Minute)
	screen := tm.waitFor("the end of the turn", func(s string) bool {
		return strings.Contains(s, "Sources:") && !spinnerRE.MatchString(s)
	})
	// Each call ends with one final mark and the page's status text.
	for _, c := range toolcallmarkup.Parse(final.Content) {
		head, subject := statustext.Lines(statustext.Text(c))
		if !strings.Contains(screen, head+" "+subject) {
			t.Errorf("no line says %q:\n%s", head+" "+subject, screen)
		}
	}
	if m := argsRE.FindString(screen); m != "" {
		t.Errorf("the collapsed view shows arguments (%q):\n%s", m, screen)
	}
	if !regexp.MustCompile(`✓ Found \d+ results? for: `).MatchString(screen) {
		t.Errorf("a finished search does not read as the page's \"Found N results for: …\":\n%s", screen)
	}
	if os.Getenv("TOOLMARK_SCREENSHOTS") != "" {
		prev := ""
		tm.waitFor("a still screen", func(s string) bool { ok := s == prev; prev = s; return ok })
		saveScreenshot(t, tm.screenANSI(), "tui-collapsed.png")
		tm.keys("C-o")
		tm.waitText(expandedMarker)
		saveScreenshot(t, tm.screenANSI(), "tui-expanded.png")
	}
	t.Logf("final screen:\n%s", screen)
}

// activeTurn returns the running turn of the newest conversation.
func activeTurn(t *testing.T, c *client.Client) string {
	t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		convs, err := c.ListConversations(ctx)
		if err != nil || len(convs) == 0 {
			continue
		}
		conv, err := c.GetConversation(ctx, convs[0].ID)
		if err == nil && conv.ActiveTurn != nil {
			return conv.ActiveTurn.ID
		}
	}
	t.Fatal("no active turn")
	return ""
}

func mustTurn(t *testing.T, c *client.Client, id string) client.TurnState {
	t.Helper()
	st, err := c.GetTurn(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestTUICancel: the first Ctrl-C cancels the turn — the partial text
// stays, open tools show ⊘, one end line — and the second quits.
func TestTUICancel(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 80 * time.Millisecond})
	tm := startTerm(t, srv.URL, 120, 50)
	tm.waitText("offline demo model")
	tm.typeLine("Compare resuming with cancelling, and explain snapshots.")
	c := client.New(srv.URL)
	turnID := activeTurn(t, c)
	// Wait for the first words of the answer.
	tm.waitText("offline demo model: no")
	tm.keys("C-c")
	screen := tm.waitText("Answer cancelled")
	st := waitFinal(t, c, turnID, 30*time.Second)
	if st.Turn.Status != toolmark.TurnCancelled {
		t.Errorf("turn %s, want cancelled", st.Turn.Status)
	}
	screen = tm.waitFor("no spinner left", func(s string) bool { return !spinnerRE.MatchString(s) })
	if n := strings.Count(screen, "Answer cancelled"); n != 1 {
		t.Errorf("%d end lines, want 1:\n%s", n, screen)
	}
	if !strings.Contains(screen, "offline demo model: no") {
		t.Errorf("the partial answer is gone:\n%s", screen)
	}
	if strings.Count(st.Content, `status="cancelled"`) > 0 && !strings.Contains(screen, "⊘") {
		t.Errorf("no cancelled tool shows:\n%s", screen)
	}
	// The client is still there. On an idle, empty prompt a Ctrl-C asks
	// before quitting; a second one quits. (A press right after the one
	// that cancelled would be the second of a double press, which quits.)
	time.Sleep(400 * time.Millisecond)
	if strings.Contains(screen, "EXIT=") {
		t.Fatalf("the first Ctrl-C quit:\n%s", screen)
	}
	tm.keys("C-c")
	screen = tm.waitText("Press Ctrl-C again to quit")
	if strings.Contains(screen, "EXIT=") {
		t.Fatalf("a Ctrl-C on an idle prompt quit at once:\n%s", screen)
	}
	tm.keys("C-c")
	tm.waitText("EXIT=0")

	// While an answer is written, two Ctrl-C cancel it and quit.
	tm2 := startTerm(t, srv.URL, 120, 50)
	tm2.waitText("offline demo model")
	tm2.typeLine("Compare resuming with cancelling, and explain snapshots.")
	tm2.waitFor("a tool call", func(s string) bool { return spinnerRE.MatchString(s) && strings.Contains(s, "ub-agent") })
	turn2 := activeTurn(t, c)
	tm2.keys("C-c")
	tm2.keys("C-c")
	tm2.waitText("EXIT=0")
	if st := waitFinal(t, c, turn2, 30*time.Second); st.Turn.Status != toolmark.TurnCancelled {
		t.Errorf("after two Ctrl-C: turn %s, want cancelled", st.Turn.Status)
	}
}

// TestTUIHistory: --conversation shows the conversation so far; /list
// lists the conversations and opens one.
func TestTUIHistory(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	c := client.New(srv.URL)
	first, err := c.Chat(ctx, "", "What is a snapshot?")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat(ctx, first.ConversationID, "And what is a ToolCall tag?"); err != nil {
		t.Fatal(err)
	}
	other, err := c.Chat(ctx, "", "How does cancelling work?")
	if err != nil {
		t.Fatal(err)
	}

	tm := startTerm(t, srv.URL, 120, 80, "--conversation", first.ConversationID)
	screen := tm.waitText("And what is a ToolCall tag?")
	for _, want := range []string{"› What is a snapshot?", "✓ Found ", "Sources:", " tokens in · "} {
		if !strings.Contains(screen, want) {
			t.Errorf("history lacks %q:\n%s", want, screen)
		}
	}
	if spinnerRE.MatchString(screen) {
		t.Errorf("a finished conversation shows a spinner:\n%s", screen)
	}

	tm.typeLine("/list")
	tm.waitText("Conversations")
	screen = tm.waitText(other.ConversationID)
	if !strings.Contains(screen, "How does cancelling work?") {
		t.Errorf("the list lacks a title:\n%s", screen)
	}
	tm.keys("Enter") // the newest is selected first
	screen = tm.waitFor("the other conversation", func(s string) bool {
		// The header names the conversation by its title.
		return strings.HasPrefix(s, "toolmark") && strings.Contains(strings.SplitN(s, "\n", 2)[0], "How does cancelling work?") &&
			strings.Contains(s, "Sources:")
	})
	if strings.Contains(screen, "What is a snapshot?") {
		t.Errorf("the other conversation still shows:\n%s", screen)
	}
	tm.typeLine("/quit")
	tm.waitText("EXIT=0")
}

// hostile holds every kind of terminal control a document or a page could
// carry: CSI (colour, clear screen), OSC (window title, clipboard,
// hyperlink), a DCS string, C1 controls as UTF-8 and a carriage return.
const hostile = "zebrafish BEFORE\x1b[41mRED\x1b[0m \x1b]0;PWNED-TITLE\x07 \x1b]52;c;UFdORUQ=\x07 " +
	"\x1b]8;;http://evil.example/\x1b\\LINK\x1b]8;;\x1b\\ \x1bPqDCS\x1b\\ \u009b41mC1RED \u009d0;C1TITLE\u009c " +
	"\x1b[2J\rAFTER zebrafish"

// hostileServer serves a page whose text holds the hostile sequences.
func hostileServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "Page about zebrafish.\n\n"+hostile+"\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// checkHarmless fails when output holds one of the hostile sequences
// (the terminal client's own output has escape sequences, but never
// these), or misses the printable text around them.
func checkHarmless(t *testing.T, what, out string) {
	t.Helper()
	for _, bad := range []string{"\x1b]0;PWNED", "\x1b]52;", "\x1b]8;;http://evil", "\x1bPq", "\x1b[41m", "\x1b[2J\r",
		"\u009b", "\u009d", "\u009c", "\x07 "} {
		if strings.Contains(out, bad) {
			t.Errorf("%s: holds %q", what, bad)
		}
	}
	for _, want := range []string{"BEFORE", "RED", "AFTER"} {
		if !strings.Contains(out, want) {
			t.Errorf("%s: lacks the harmless text %q", what, want)
		}
	}
}

const hostileQuestion = "What about zebrafish? Also fetch %s/page"

func hostileTestServer(t *testing.T) (*testserver.Server, string) {
	page := hostileServer(t)
	// A realistic pace, so that the turn is still running when the test
	// looks for it.
	srv := testserver.Start(t, testserver.Options{DemoDelay: 20 * time.Millisecond,
		FetchAllow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	if _, err := srv.DB.UpsertDocument(context.Background(), "hostile.md", "Zebrafish \x1b]0;PWNED-TITLE\x07 notes", hostile); err != nil {
		t.Fatal(err)
	}
	return srv, fmt.Sprintf(hostileQuestion, page.URL)
}

// TestTUIHostileContent: a knowledge-base document and a fetched page full
// of terminal controls show as harmless text in the full-screen client.
func TestTUIHostileContent(t *testing.T) {
	srv, question := hostileTestServer(t)
	tm := startTerm(t, srv.URL, 140, 70)
	tm.waitText("offline demo model")
	tm.typeLine(question)
	c := client.New(srv.URL)
	turnID := activeTurn(t, c)
	st := waitFinal(t, c, turnID, time.Minute)
	if !strings.Contains(st.Content, "\x1b") {
		t.Fatalf("the answer does not carry the hostile text, so the test proves nothing:\n%q", st.Content)
	}
	screen := tm.waitText("Sources:")
	tm.keys("C-o")
	expanded := tm.waitText(expandedMarker)
	raw := tm.rawOutput()
	checkHarmless(t, "terminal output", raw)
	checkHarmless(t, "screen", screen+expanded)
	if title := strings.TrimSpace(tm.tmux("display-message", "-p", "-t", "t", "#{pane_title}")); strings.Contains(title, "PWNED") {
		t.Errorf("the window title was set to %q", title)
	}
	if ansi := tm.screenANSI(); strings.Contains(ansi, "[41m") || strings.Contains(ansi, ";41m") {
		t.Errorf("a red background reached the screen:\n%s", ansi)
	}
}

// TestChatQuietHostileContent: the same content in --quiet output.
func TestChatQuietHostileContent(t *testing.T) {
	srv, question := hostileTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, stdout, stderr := chatCmd(ctx, t, srv.URL, "--quiet", "-m", question)
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	out := stdout.String()
	t.Logf("--quiet output: %q", out)
	checkHarmless(t, "--quiet output", out)
	for _, r := range out {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f {
			t.Fatalf("control %U in --quiet output:\n%q", r, out)
		}
	}
	content, _ := lastAnswer(t, srv.URL)
	if !strings.Contains(content, "\x1b") {
		t.Fatalf("the answer does not carry the hostile text, so the test proves nothing")
	}
}

// onlyConversation returns the server's one conversation, its messages
// included, and fails the test when there is not exactly one.
func onlyConversation(t *testing.T, url string) client.ConversationPage {
	t.Helper()
	c := client.New(url)
	convs, err := c.ListConversations(context.Background())
	if err != nil || len(convs) != 1 {
		t.Fatalf("conversations %v, %v", convs, err)
	}
	cv, err := c.GetConversation(context.Background(), convs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return cv
}
