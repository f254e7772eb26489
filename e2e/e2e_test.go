// Package e2e runs the clients against a real toolmark server: the web
// page in the system Chromium (scripts in api/web/e2e, driven by
// playwright-core) and the terminal client as a built binary.
//
// The browser tests skip when Chromium or the npm packages are missing,
// except under CI=true, where that fails them: scripts/need-browser.sh
// installs both.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolmark/toolmark/internal/harness/need"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// repoRoot is the module's root directory.
func repoRoot(tb testing.TB) string {
	tb.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("cannot locate the test file")
	}
	return filepath.Dir(filepath.Dir(file))
}

// missing skips the test for a missing tool, or fails it under CI=true.
func missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	need.Missing(tb, fmt.Sprintf(format, args...), "scripts/need-browser.sh")
}

// chromiumPath finds the browser the scripts launch.
func chromiumPath() string {
	if p := os.Getenv("TOOLMARK_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// needBrowser returns the node binary, the scripts' directory and the
// Chromium to use, or skips (fails under CI) when one is missing.
func needBrowser(tb testing.TB) (node, dir, chromium string) {
	tb.Helper()
	chromium = chromiumPath()
	if chromium == "" {
		missing(tb, "Chromium is not installed")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing(tb, "node is not installed")
	}
	dir = filepath.Join(repoRoot(tb), "api", "web", "e2e")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core")); err != nil {
		missing(tb, "the npm packages of api/web/e2e are not installed")
	}
	return node, dir, chromium
}

// runScript runs one browser script against baseURL and fails the test with
// its output when it fails. Screenshots go to $TOOLMARK_SCREENSHOTS when
// set, else to a temporary directory that is kept (and named in the log)
// only when the test fails.
func runScript(t *testing.T, script, baseURL string, env ...string) string {
	t.Helper()
	node, dir, chromium := needBrowser(t)
	shots := os.Getenv("TOOLMARK_SCREENSHOTS")
	if shots == "" {
		var err error
		shots, err = os.MkdirTemp("", "toolmark-screenshots-")
		if err != nil {
			t.Fatal(err)
		}
		tmp := shots
		t.Cleanup(func() {
			if !t.Failed() {
				os.RemoveAll(tmp)
			}
		})
	}
	shots = filepath.Join(shots, strings.TrimSuffix(script, ".mjs"))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, baseURL, shots)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "TOOLMARK_CHROMIUM="+chromium), env...)
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	t.Logf("%s (screenshots in %s):\n%s", script, shots, out.String())
	if err != nil {
		t.Fatalf("%s failed: %v", script, err)
	}
	return out.String()
}

// cutProxy is a reverse proxy in front of a server that can drop every
// open event stream at once, as a network failure does: the browser's
// connection is closed without the stream's end. POST /__test/cut drops
// the turns' event streams; with ?fail=N the next N requests for one are then
// answered 503, as a restarting server would (EventSource gives up on
// such an answer, so the page must reconnect by itself).
type cutProxy struct {
	target *url.URL
	proxy  *httputil.ReverseProxy
	mu     sync.Mutex
	cuts   map[chan struct{}]bool
	fail   int
}

func newCutProxy(target string) *cutProxy {
	u, _ := url.Parse(target)
	p := &cutProxy{target: u, cuts: map[chan struct{}]bool{}}
	p.proxy = httputil.NewSingleHostReverseProxy(u)
	p.proxy.FlushInterval = -1
	return p
}

func (p *cutProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/__test/cut" {
		p.mu.Lock()
		n := len(p.cuts)
		for c := range p.cuts {
			close(c)
			delete(p.cuts, c)
		}
		p.fail, _ = strconv.Atoi(r.URL.Query().Get("fail"))
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"cut":`+strconv.Itoa(n)+`}`)
		return
	}
	if !strings.HasPrefix(r.URL.Path, "/api/turns/") || !strings.HasSuffix(r.URL.Path, "/events") {
		p.proxy.ServeHTTP(w, r) // not a turn's event stream (a conversation's watch passes through)
		return
	}
	cut := make(chan struct{})
	p.mu.Lock()
	if p.fail > 0 {
		p.fail--
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"error":{"code":"unavailable","message":"restarting"}}`)
		return
	}
	p.cuts[cut] = true
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.cuts, cut)
		p.mu.Unlock()
	}()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-cut:
			cancel()
		case <-ctx.Done():
		}
	}()
	p.proxy.ServeHTTP(w, r.WithContext(ctx))
	select {
	case <-cut:
		panic(http.ErrAbortHandler) // drop the browser's connection mid-stream
	default:
	}
}
