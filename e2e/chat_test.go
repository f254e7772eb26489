package e2e

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/internal/harness/testserver"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildOut  []byte
)

// toolmarkBin builds cmd/toolmark once per test binary.
func toolmarkBin(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "toolmark-e2e-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "toolmark")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/toolmark")
		cmd.Dir = repoRoot(tb)
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		tb.Fatalf("building toolmark: %v\n%s", buildErr, buildOut)
	}
	return binPath
}

// chatCmd prepares "toolmark chat --server url args…".
func chatCmd(ctx context.Context, tb testing.TB, url string, args ...string) (*exec.Cmd, *testserver.Buffer, *testserver.Buffer) {
	tb.Helper()
	cmd := exec.CommandContext(ctx, toolmarkBin(tb), append([]string{"chat", "--server", url}, args...)...)
	cmd.Env = append(os.Environ(), "TOOLMARK_SERVER=", "TOOLMARK_TOKEN=")
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr testserver.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

// lastAnswer returns the stored content of the newest conversation's last
// assistant message, and its turn id.
// waitFinal polls a turn until it is final or d has passed, and returns
// what it last saw.
func waitFinal(tb testing.TB, c *client.Client, turnID string, d time.Duration) client.TurnState {
	tb.Helper()
	ctx := context.Background()
	for end := time.Now().Add(d); ; time.Sleep(50 * time.Millisecond) {
		st, err := c.GetTurn(ctx, turnID)
		if err != nil {
			tb.Fatal(err)
		}
		if st.Turn.Status.Final() || time.Now().After(end) {
			return st
		}
	}
}

func lastAnswer(tb testing.TB, url string) (content, turnID string) {
	tb.Helper()
	ctx := context.Background()
	c := client.New(url)
	convs, err := c.ListConversations(ctx)
	if err != nil || len(convs) == 0 {
		tb.Fatalf("listing conversations: %v (%d)", err, len(convs))
	}
	conv, err := c.GetConversation(ctx, convs[0].ID)
	if err != nil {
		tb.Fatal(err)
	}
	for i := len(conv.Messages) - 1; i >= 0; i-- {
		if m := conv.Messages[i]; m.Role == toolmark.RoleAssistant {
			return m.Content, m.TurnID
		}
	}
	tb.Fatal("no assistant message")
	return "", ""
}

// checkAnswerShown checks that every line of the stored answer's text shows
// in out exactly as many times as in the answer, and that each tool call
// has one final status line.
func checkAnswerShown(t *testing.T, out, content string) {
	t.Helper()
	plain := toolcallmarkup.Text(content)
	for _, line := range strings.Split(plain, "\n") {
		if len(strings.TrimSpace(line)) < 12 {
			continue
		}
		if got, want := strings.Count(out, line), strings.Count(plain, line); got != want {
			t.Errorf("line %q shows %d times, want %d\noutput:\n%s", line, got, want, out)
		}
	}
	calls := toolcallmarkup.Parse(content)
	final := strings.Count(out, "✓ ") + strings.Count(out, "✗ ") + strings.Count(out, "⊘ ")
	if final < len(calls) {
		t.Errorf("%d final status lines for %d tool calls\noutput:\n%s", final, len(calls), out)
	}
}

func TestChatOneShot(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 2 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, stdout, stderr := chatCmd(ctx, t, srv.URL, "-m", "How does a client resume the event stream?")
	if err := cmd.Run(); err != nil {
		t.Fatalf("toolmark chat: %v\nstderr:\n%s\nstdout:\n%s", err, stderr, stdout)
	}
	out := stdout.String()
	t.Logf("output:\n%s", out)
	for _, want := range []string{"⠋ Searching knowledge base for", "✓ Found", "offline demo model"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	content, _ := lastAnswer(t, srv.URL)
	checkAnswerShown(t, out, content)
}

func TestChatInteractive(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, stdout, stderr := chatCmd(ctx, t, srv.URL)
	cmd.Stdin = strings.NewReader("What is a ToolCall tag?\n\nAnd what is a snapshot?\n/quit\n")
	if err := cmd.Run(); err != nil {
		t.Fatalf("toolmark chat: %v\nstderr:\n%s", err, stderr)
	}
	out := stdout.String()
	if strings.Count(out, "› ") != 4 { // a prompt per line read, the empty one included
		t.Errorf("got %d prompts, want 4\n%s", strings.Count(out, "› "), out)
	}
	if !strings.Contains(stderr.String(), "offline demo model") {
		t.Errorf("the banner does not name the demo model: %s", stderr)
	}
	convs, err := client.New(srv.URL).ListConversations(ctx)
	if err != nil || len(convs) != 1 {
		t.Fatalf("want both messages in one conversation: %v, %d conversations", err, len(convs))
	}
	conv, _ := client.New(srv.URL).GetConversation(ctx, convs[0].ID)
	if len(conv.Messages) != 4 {
		t.Errorf("got %d messages, want 4", len(conv.Messages))
	}
}

// TestChatResume cuts the terminal client's event stream several times
// mid-turn: the answer still shows once, complete.
func TestChatResume(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 60 * time.Millisecond})
	proxy := httptest.NewServer(newCutProxy(srv.URL))
	defer proxy.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, stdout, stderr := chatCmd(ctx, t, proxy.URL, "-m", "Explain snapshots and how resuming works.")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	cuts := 0
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("toolmark chat: %v\nstderr:\n%s", err, stderr)
			}
			break wait
		case <-tick.C:
			resp, err := http.Post(proxy.URL+"/__test/cut", "application/json", nil)
			if err == nil {
				var b bytes.Buffer
				b.ReadFrom(resp.Body)
				resp.Body.Close()
				if !strings.Contains(b.String(), `"cut":0`) {
					cuts++
				}
			}
		}
	}
	if cuts == 0 {
		t.Fatal("the stream was never cut: the turn ended too fast")
	}
	t.Logf("%d cuts; output:\n%s", cuts, stdout)
	content, _ := lastAnswer(t, srv.URL)
	checkAnswerShown(t, stdout.String(), content)
}

// TestChatInterrupt: the first Ctrl-C cancels the turn on the server and
// the client shows the cancelled tools; the command exits non-zero.
func TestChatInterrupt(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 100 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, stdout, stderr := chatCmd(ctx, t, srv.URL, "-m", "Compare resuming with cancelling, and explain snapshots.")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Interrupt once, after the first tool call has finished.
	c := client.New(srv.URL)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stdout.String(), "✓ ") {
		if time.Now().After(deadline) {
			t.Fatalf("no tool call finished\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Error("a cancelled one-shot chat exited 0")
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("toolmark chat did not end after Ctrl-C\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	if !strings.Contains(stderr.String(), "cancelling the answer") || !strings.Contains(stderr.String(), "Answer cancelled") {
		t.Errorf("stderr does not tell about the cancel:\n%s", stderr)
	}
	_, turnID := lastAnswer(t, srv.URL)
	st := waitFinal(t, c, turnID, 5*time.Second)
	if st.Turn.Status != toolmark.TurnCancelled {
		t.Errorf("turn status %s, want cancelled", st.Turn.Status)
	}
	for _, tc := range toolcallmarkup.Parse(st.Content) {
		if !tc.Status.Final() {
			t.Errorf("tool call %s left %s", tc.ID, tc.Status)
		}
	}
	if !strings.Contains(stdout.String(), "⊘ ") {
		t.Errorf("no cancelled tool call shown:\n%s", stdout)
	}
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
}

// TestChatToken: against a token-mode server the client needs a token, from
// --token or TOOLMARK_TOKEN.
func TestChatToken(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{Auth: "token"})
	tok := mustToken(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	cmd, _, stderr := chatCmd(ctx, t, srv.URL, "-m", "hello")
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), "unauthorized") {
		t.Errorf("without a token: err %v, stderr %s", err, stderr)
	}

	cmd, stdout, stderr := chatCmd(ctx, t, srv.URL, "--token", tok, "-m", "What is toolmark?")
	if err := cmd.Run(); err != nil {
		t.Fatalf("with --token: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout.String(), "✓ ") {
		t.Errorf("with --token: no tool call finished:\n%s", stdout)
	}

	cmd, stdout, stderr = chatCmd(ctx, t, srv.URL, "-m", "What is a snapshot?")
	cmd.Env = append(cmd.Env, "TOOLMARK_TOKEN="+tok)
	if err := cmd.Run(); err != nil {
		t.Fatalf("with TOOLMARK_TOKEN: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout.String(), "✓ ") {
		t.Errorf("with TOOLMARK_TOKEN: no tool call finished:\n%s", stdout)
	}
}

// TestChatInterruptTwice: a second Ctrl-C right after the first quits at
// once (unless the server confirmed the cancel in between), and the turn is
// cancelled on the server either way: the cancel request is not dropped.
func TestChatInterruptTwice(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 100 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, stdout, stderr := chatCmd(ctx, t, srv.URL, "-m", "Compare resuming with cancelling, and explain snapshots.")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(stdout.String(), "⠋ "); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no tool call started\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(5 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-done:
		if err == nil || !strings.Contains(stderr.String(), "was cancelled") && !strings.Contains(stderr.String(), "Answer cancelled") {
			t.Errorf("exit %v, stderr:\n%s\nstdout:\n%s", err, stderr, stdout)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("toolmark chat did not quit on the second Ctrl-C\nstderr:\n%s", stderr)
	}
	_, turnID := lastAnswer(t, srv.URL)
	c := client.New(srv.URL)
	st := waitFinal(t, c, turnID, 10*time.Second)
	if st.Turn.Status != toolmark.TurnCancelled {
		t.Errorf("turn status %s, want cancelled", st.Turn.Status)
	}
}

// TestChatContinue: a one-shot chat names its new conversation, and
// --conversation sends the next message into it.
func TestChatContinue(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, _, stderr := chatCmd(ctx, t, srv.URL, "-m", "What is a ToolCall tag?")
	if err := cmd.Run(); err != nil {
		t.Fatalf("first message: %v\n%s", err, stderr)
	}
	convs, err := client.New(srv.URL).ListConversations(ctx)
	if err != nil || len(convs) != 1 {
		t.Fatalf("%v, %d conversations", err, len(convs))
	}
	id := convs[0].ID
	if !strings.Contains(stderr.String(), "--conversation "+id) {
		t.Errorf("stderr does not name the conversation:\n%s", stderr)
	}
	cmd, _, stderr = chatCmd(ctx, t, srv.URL, "--conversation", id, "And what is a snapshot?")
	if err := cmd.Run(); err != nil {
		t.Fatalf("second message: %v\n%s", err, stderr)
	}
	conv, err := client.New(srv.URL).GetConversation(ctx, id)
	if err != nil || len(conv.Messages) != 4 {
		t.Fatalf("%v, %d messages, want 4", err, len(conv.Messages))
	}
	if conv.Messages[2].Content != "And what is a snapshot?" {
		t.Errorf("third message %q", conv.Messages[2].Content)
	}
}
