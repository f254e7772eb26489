package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// serverProcess is `toolmark serve` running as a child process.
type serverProcess struct {
	cmd  *exec.Cmd
	url  string
	logs *bytes.Buffer
}

func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "toolmark")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/toolmark").CombinedOutput()
	if err != nil {
		t.Fatalf("building toolmark: %v\n%s", err, out)
	}
	return bin
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func startProcess(t *testing.T, bin, dbURL string, extra ...string) *serverProcess {
	t.Helper()
	addr := freeAddr(t)
	p := &serverProcess{url: "http://" + addr, logs: &bytes.Buffer{}}
	args := append([]string{"serve", "--addr", addr, "--lease-ttl", "1s", "--demo-delay", "40ms"}, extra...)
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(p.url + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the server did not become ready:\n%s", p.logs)
	return nil
}

// TestCrashRecovery kills the server with SIGKILL in the middle of a turn
// and starts it again: the turn must end interrupted, the stored message
// must hold no pending or running tag, and every event a client received
// must be in the log.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	bin := buildBinary(t)
	dbURL := pgtest.URL(t)
	p := startProcess(t, bin, dbURL)
	c := newClient(t, p.url, "")
	turn := c.postTurn(c.newConversation(), twoToolQuestion)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp := c.stream(ctx, turn.ID, -1)
	var received []toolmark.Event
	_, _ = readFrames(resp.Body, func(f frame) bool {
		if f.Data == "" {
			return true
		}
		e := mustEvent(t, f)
		received = append(received, e)
		// Crash while a tool call is open.
		return e.Type != toolmark.EventToolCallRunning && e.Type != toolmark.EventToolCallDelta
	})
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
	resp.Body.Close()
	if len(received) == 0 || received[len(received)-1].Type.Terminal() {
		t.Fatalf("the turn was not mid-way when the server died: %v", summarize(received))
	}

	p2 := startProcess(t, bin, dbURL)
	c2 := newClient(t, p2.url, "")
	var tr struct {
		Turn    toolmark.Turn `json:"turn"`
		Content string        `json:"content"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c2.mustJSON("GET", "/api/turns/"+turn.ID, "", 200, &tr)
		if tr.Turn.Status.Final() || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if tr.Turn.Status != toolmark.TurnInterrupted {
		t.Fatalf("turn status after restart: %s, want interrupted\nlogs:\n%s", tr.Turn.Status, p2.logs)
	}
	calls := toolcallmarkup.Parse(tr.Content)
	if len(calls) == 0 {
		t.Errorf("stored content lost its tags: %q", tr.Content)
	}
	for _, tc := range calls {
		if !tc.Status.Final() {
			t.Errorf("stored tag %s is still %s", tc.ID, tc.Status)
		}
	}
	log := c2.allEvents(turn.ID, -1)
	if len(log) < len(received) {
		t.Fatalf("the log has %d events, the client received %d", len(log), len(received))
	}
	if !eventsEqual(log[:len(received)], received) {
		t.Fatalf("events the client received are not in the log as received")
	}
	last := log[len(log)-1]
	var end toolmark.TurnEndData
	_ = json.Unmarshal(last.Data, &end)
	if last.Type != toolmark.EventTurnFailed || end.Status != toolmark.TurnInterrupted {
		t.Errorf("last event %s %+v, want turn_failed interrupted", last.Type, end)
	}
	rebuilt, err := replayLog(log)
	if err != nil {
		t.Fatal(err)
	}
	if rebuilt != tr.Content {
		t.Errorf("the log rebuilds %q, stored %q", rebuilt, tr.Content)
	}
	// The page of the conversation shows the final statuses too.
	var conv struct {
		Messages []struct{ HTML string } `json:"messages"`
	}
	c2.mustJSON("GET", "/api/conversations/"+turn.ConversationID, "", 200, &conv)
	if html := conv.Messages[len(conv.Messages)-1].HTML; bytes.Contains([]byte(html), []byte(`data-status="running"`)) ||
		bytes.Contains([]byte(html), []byte(`data-status="pending"`)) {
		t.Errorf("rendered message still shows a spinner: %s", html)
	}
	_ = p2.cmd.Process.Signal(syscall.SIGTERM)
	if err := p2.cmd.Wait(); err != nil {
		t.Errorf("graceful shutdown: %v\n%s", err, p2.logs)
	}
}

// TestGracefulShutdown sends SIGTERM during a turn with a short grace: the
// server cancels and finalises the turn, then exits cleanly, leaving no
// turn running and no open tag.
func TestGracefulShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	bin := buildBinary(t)
	dbURL := pgtest.URL(t)
	p := startProcess(t, bin, dbURL, "--shutdown-grace", "200ms", "--demo-delay", "60ms")
	c := newClient(t, p.url, "")
	turn := c.postTurn(c.newConversation(), twoToolQuestion)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp := c.stream(ctx, turn.ID, -1)
	var evs []toolmark.Event
	signalled := false
	_, _ = readFrames(resp.Body, func(f frame) bool {
		if f.Data == "" {
			return true
		}
		e := mustEvent(t, f)
		evs = append(evs, e)
		if e.Type == toolmark.EventToolCallStarted && !signalled {
			signalled = true
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
		return !e.Type.Terminal()
	})
	resp.Body.Close()
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.logs)
	}
	// The stream may end at shutdown before the terminal event; the log
	// has it.
	p2 := startProcess(t, bin, dbURL)
	c2 := newClient(t, p2.url, "")
	var tr struct {
		Turn    toolmark.Turn `json:"turn"`
		Content string        `json:"content"`
	}
	c2.mustJSON("GET", "/api/turns/"+turn.ID, "", 200, &tr)
	if tr.Turn.Status != toolmark.TurnCancelled {
		t.Fatalf("turn after shutdown: %s, want cancelled\n%s", tr.Turn.Status, p.logs)
	}
	for _, tc := range toolcallmarkup.Parse(tr.Content) {
		if !tc.Status.Final() {
			t.Errorf("tag %s left %s", tc.ID, tc.Status)
		}
	}
	log := c2.allEvents(turn.ID, -1)
	if !eventsEqual(log[:len(evs)], evs) || log[len(log)-1].Type != toolmark.EventTurnCancelled {
		t.Errorf("log after shutdown ends with %s", log[len(log)-1].Type)
	}
}
