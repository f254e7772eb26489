package mcptools_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent/mcptools"
)

// one runs a demo turn that makes the call spelled out in question and
// returns its final event.
func one(t *testing.T, m *mcptools.Manager, question string) toolmark.ToolCallData {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr := runTurn(ctx, t, m, question)
	if tr.err != nil {
		t.Fatalf("%s: %v", question, tr.err)
	}
	f := tr.finals()
	if len(f) != 1 {
		t.Fatalf("%s: %d final events, want 1", question, len(f))
	}
	return f[0]
}

// noInternals fails when a sentence people see names an address.
func noInternals(t *testing.T, text string) {
	t.Helper()
	for _, bad := range []string{"http", "127.0.0.1", "localhost", ":/", "/mcp", "%!"} {
		if strings.Contains(text, bad) {
			t.Errorf("%q shows %q", text, bad)
		}
	}
}

func wantError(t *testing.T, f toolmark.ToolCallData, text string) {
	t.Helper()
	if f.Status != "error" || f.Error != text {
		t.Errorf("%s: %s %q, want error %q", f.Name, f.Status, f.Error, text)
	}
	noInternals(t, f.Error)
}

func waitConnected(t *testing.T, m *mcptools.Manager) {
	t.Helper()
	waitFor(t, 20*time.Second, "connected server", func() bool {
		st := m.Servers()
		return len(st) == 1 && st[0].Status == mcptools.StatusConnected
	})
}

// TestStdioFaults: a server that exits mid-call fails that call only and
// is restarted; a malformed reply fails the call; isError gives the tool's
// own text; a hung call ends after the timeout of silence, while a call
// that keeps reporting progress is not cut.
func TestStdioFaults(t *testing.T) {
	m := mustStart(t, mustParse(t, fakeStdio(t, "1", nil), nil))
	waitConnected(t, m)
	ok := one(t, m, `fake_ok {}`)
	if ok.Status != "success" || !strings.HasPrefix(ok.Result, "ok from pid ") {
		t.Fatalf("ok: %+v", ok)
	}
	wantError(t, one(t, m, `fake_crash {}`), "the fake tool server stopped")
	waitConnected(t, m)
	again := one(t, m, `fake_ok {}`)
	if again.Status != "success" || again.Result == ok.Result {
		t.Errorf("after the restart: %+v (before: %q)", again, ok.Result)
	}
	if f := one(t, m, `fake_garbage {}`); f.Status != "error" || f.Error == "" {
		t.Errorf("garbage: %+v", f)
	} else {
		noInternals(t, f.Error)
	}
	waitConnected(t, m)
	wantError(t, one(t, m, `fake_fail {}`), "the widget is jammed")
	start := time.Now()
	wantError(t, one(t, m, `fake_hang {}`), "fake did not answer within 1 s")
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the hung call took %v", d)
	}
	slow := one(t, m, `fake_slow {"steps": 4, "ms": 600}`)
	if slow.Status != "success" || slow.Result != "done" {
		t.Errorf("a call reporting progress every 0.6 s with a 1 s timeout: %+v", slow)
	}
}

// TestStopReachesServer: stopping the turn during a call that never
// answers sends notifications/cancelled to the server and ends the tag
// cancelled within a second.
func TestStopReachesServer(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "cancelled")
	m := mustStart(t, mustParse(t, fakeStdio(t, "", map[string]string{"MCPTOOLS_FAKE_MARK": mark}), nil))
	ctx, cancel := context.WithCancel(context.Background())
	tr, done := startTurn(ctx, m, `fake_hang {}`)
	waitFor(t, 10*time.Second, "a running call", func() bool { return len(tr.ofType(toolmark.EventToolCallRunning)) == 1 })
	time.Sleep(100 * time.Millisecond)
	stop := time.Now()
	cancel()
	<-done
	took := time.Since(stop)
	if f := tr.finals(); len(f) != 1 || f[0].Status != "cancelled" || took > time.Second {
		t.Fatalf("after %v: %+v", took, f)
	}
	waitFor(t, 5*time.Second, "notifications/cancelled at the server", func() bool {
		_, err := os.Stat(mark)
		return err == nil
	})
}

// TestListChangedAndPages: the list is read page by page (the fake
// server's pages hold 3 tools), and a tool the server adds is offered once
// it says its list changed.
func TestListChangedAndPages(t *testing.T) {
	m := mustStart(t, mustParse(t, fakeStdio(t, "", nil), nil))
	if n := len(m.Tools()); n != 7 {
		t.Fatalf("%d tools, want the 7 of every page", n)
	}
	if f := one(t, m, `fake_add {}`); f.Status != "success" {
		t.Fatalf("add: %+v", f)
	}
	waitFor(t, 10*time.Second, "the added tool", func() bool { return hasTool(m, "fake_added") })
	if f := one(t, m, `fake_added {}`); f.Result != "added works" {
		t.Errorf("added: %+v", f)
	}
}

// TestSlowStart: a server that takes a while to start is connecting, its
// tools absent, then connected.
func TestSlowStart(t *testing.T) {
	cfg := mustParse(t, fakeStdio(t, "", map[string]string{"MCPTOOLS_FAKE_DELAY": "1500ms"}), nil)
	m := mcptools.New(cfg, mcptools.Options{})
	m.Start(context.Background())
	defer m.Close()
	if st := m.Servers(); st[0].Status != mcptools.StatusConnecting || len(m.Tools()) != 0 {
		t.Errorf("at start: %+v", st)
	}
	waitConnected(t, m)
	if len(m.Tools()) == 0 {
		t.Error("no tools once connected")
	}
}

// TestRemoteFaults: a streamable HTTP server that goes away fails the call
// with a sentence and no address, and the next call works once it is back;
// a URL that answers something else than MCP is a failed server.
func TestRemoteFaults(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	srv := fakeServer("", 100)
	serve := func(ln net.Listener) *http.Server {
		hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)}
		go func() { _ = hs.Serve(ln) }()
		return hs
	}
	hs := serve(ln)
	junk := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>a login page</html>"))
	})}
	jln, _ := net.Listen("tcp", "127.0.0.1:0")
	go func() { _ = junk.Serve(jln) }()
	defer junk.Close()

	m := mustStart(t, mustParse(t, `{"mcpServers": {"fake": {"type": "http", "url": "http://`+addr+`/mcp", "timeout": 2}}}`, nil))
	if f := one(t, m, `fake_ok {}`); f.Status != "success" {
		t.Fatalf("ok: %+v", f)
	}
	// The tools of a turn are those of its start: taken while the server
	// was up, called once it is gone (a server that stays unreachable
	// then has no tools to offer).
	tools := m.AgentTools()
	_ = hs.Close()
	tr, done := startTurnWith(context.Background(), tools, `fake_ok {}`)
	<-done
	if f := tr.finals(); len(f) != 1 || f[0].Status != "error" {
		t.Fatalf("with the server down: %+v", f)
	} else {
		noInternals(t, f[0].Error)
	}
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	hs2 := serve(ln2)
	defer hs2.Close()
	waitFor(t, 20*time.Second, "a working call once the server is back", func() bool {
		if !hasTool(m, "fake_ok") {
			return false
		}
		f := runTurn(context.Background(), t, m, `fake_ok {}`).finals()
		return len(f) == 1 && f[0].Status == "success"
	})

	bad := mustStart(t, mustParse(t, `{"mcpServers": {"junk": {"type": "http", "url": "http://`+jln.Addr().String()+`/mcp"}}}`, nil))
	st := bad.Servers()[0]
	if st.Status != mcptools.StatusFailed || st.Error == "" {
		t.Fatalf("junk server: %+v", st)
	}
	noInternals(t, st.Error)
}

// TestSSE: a server over the older HTTP+SSE transport, with headers from
// the config on every request.
func TestSSE(t *testing.T) {
	srv := fakeServer("", 100)
	sse := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var mu sync.Mutex
	var auth []string
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		sse.ServeHTTP(w, r)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	m := mustStart(t, mustParse(t, `{"mcpServers": {"fake": {"type": "sse", "url": "http://`+ln.Addr().String()+`/sse",
		"headers": {"Authorization": "Bearer ${TOKEN}"}}}}`, map[string]string{"TOKEN": "t0k"}))
	if f := one(t, m, `fake_slow {"steps": 2, "ms": 10}`); f.Status != "success" || f.Result != "done" {
		t.Fatalf("over SSE: %+v", f)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range auth {
		if a != "Bearer t0k" {
			t.Errorf("headers sent: %q", auth)
			break
		}
	}
	if len(auth) < 2 {
		t.Errorf("%d requests", len(auth))
	}
}
