package web

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	tests := []struct {
		name, method, path string
		status             int
		contentType        string
		bodyHas            string
	}{
		{"index", "GET", "/", 200, "text/html; charset=utf-8", `<script type="module" src="/app.js">`},
		{"index by name", "GET", "/index.html", 200, "text/html; charset=utf-8", "toolmark"},
		{"script", "GET", "/app.js", 200, "text/javascript; charset=utf-8", "LiveTurn"},
		{"module", "GET", "/live.js", 200, "text/javascript; charset=utf-8", "morphList"},
		{"highlighting", "GET", "/highlight.css", 200, "text/css; charset=utf-8", ".chroma .kd"},
		{"stylesheet", "GET", "/app.css", 200, "text/css; charset=utf-8", ".toolcall__icon--spinner"},
		{"icon", "GET", "/favicon.svg", 200, "image/svg+xml", "<svg"},
		{"katex", "GET", "/vendor/katex/katex.min.js", 200, "text/javascript; charset=utf-8", "katex"},
		{"katex font", "GET", "/vendor/katex/fonts/KaTeX_Main-Regular.woff2", 200, "font/woff2", ""},
		{"missing", "GET", "/nope.js", 404, "", ""},
		{"traversal", "GET", "/../web.go", 404, "", ""},
		{"head", "HEAD", "/", 200, "text/html; charset=utf-8", ""},
		{"post", "POST", "/", 405, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, srv.URL+tt.path, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if got := resp.Header.Get("Content-Security-Policy"); got != ContentSecurityPolicy {
				t.Errorf("CSP %q, want %q", got, ContentSecurityPolicy)
			}
			if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q", got)
			}
			if tt.contentType != "" && resp.Header.Get("Content-Type") != tt.contentType {
				t.Errorf("content type %q, want %q", resp.Header.Get("Content-Type"), tt.contentType)
			}
			if !strings.Contains(string(body), tt.bodyHas) {
				t.Errorf("body lacks %q", tt.bodyHas)
			}
		})
	}
}

// TestNoInlineCode checks what the CSP would otherwise break silently: no
// inline scripts, styles or event handlers in the HTML, and innerHTML used
// once (live.js parseHTML), for the server's sanitised html.
func TestNoInlineCode(t *testing.T) {
	sub, _ := fs.Sub(static, "static")
	err := fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := fs.ReadFile(sub, p)
		s := string(b)
		switch {
		case strings.HasSuffix(p, ".html"):
			for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(s, -1) {
				if !strings.Contains(tag, "src=") {
					t.Errorf("%s: inline script %s", p, tag)
				}
			}
			for _, re := range []string{`\sstyle=`, `<style`, `\son[a-z]+=`} {
				if regexp.MustCompile(re).MatchString(s) {
					t.Errorf("%s: matches %s", p, re)
				}
			}
		case strings.HasSuffix(p, ".js"):
			n := strings.Count(s, ".innerHTML")
			want := 0
			if p == "live.js" {
				want = 1
			}
			if n != want {
				t.Errorf("%s: innerHTML used %d times, want %d", p, n, want)
			}
			for _, bad := range []string{"eval(", "new Function", "outerHTML", "insertAdjacentHTML", "document.write"} {
				if strings.Contains(s, bad) {
					t.Errorf("%s: uses %s", p, bad)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNoCopyOfTheRules: the page keeps no copy of the server's rules — no
// status texts (package statustext writes them into the frames and the
// rendered widgets) and no parser of the ToolCall markup (the server
// renders it). answer.js alone names the tag, to leave the elements out of
// a copied answer.
func TestNoCopyOfTheRules(t *testing.T) {
	for name, s := range pageScripts(t) {
		for _, rule := range []string{"Searching knowledge base", "Preparing search", "Sub-agent working", "Could not fetch", "Thinking", "<ToolCall", "toolCallId="} {
			if strings.Contains(s, rule) && !(name == "answer.js" && rule == "<ToolCall") {
				t.Errorf("%s holds %q: a copy of a rule the server owns", name, rule)
			}
		}
	}
}

// pageScripts returns the page's own scripts (vendor/ left out) by name.
func pageScripts(tb testing.TB) map[string]string {
	tb.Helper()
	sub, _ := fs.Sub(static, "static")
	names, err := fs.Glob(sub, "*.js")
	if err != nil || len(names) < 5 {
		tb.Fatalf("scripts %v: %v", names, err)
	}
	out := map[string]string{}
	for _, name := range names {
		b, err := fs.ReadFile(sub, name)
		if err != nil {
			tb.Fatal(err)
		}
		out[name] = string(b)
	}
	return out
}
