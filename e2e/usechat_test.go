package e2e

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolmark/toolmark/internal/harness/need"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// TestBrowserUseChat drives a useChat page, bundled with esbuild from
// api/protocols/usechat, in Chromium against toolmark's AI SDK routes:
// tool parts live, a reload mid-turn with resume: true, Stop.
func TestBrowserUseChat(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("..", "api", "protocols"))
	if err != nil {
		t.Fatal(err)
	}
	esbuild := filepath.Join(dir, "node_modules", ".bin", "esbuild")
	need.NodePackage(t, dir, "esbuild", "scripts/need-protocols.sh")
	bundle := filepath.Join(t.TempDir(), "usechat.js")
	cmd := exec.Command(esbuild, "usechat/page.jsx", "--bundle", "--format=esm", "--jsx=automatic", "--minify",
		`--define:process.env.NODE_ENV="production"`, "--log-level=warning", "--outfile="+bundle)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("esbuild: %v: %s", err, out)
	}
	srv := testserver.Start(t, testserver.Options{DemoDelay: 40 * time.Millisecond})
	target, _ := url.Parse(srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(`<!doctype html><meta charset="utf-8"><title>useChat</title><div id="root"></div><script type="module" src="/usechat.js"></script>`))
		case "/usechat.js":
			http.ServeFile(w, r, bundle)
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	defer page.Close()
	runScript(t, "usechat.mjs", page.URL)
}
