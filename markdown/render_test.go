package markdown

import (
	"strings"
	"sync"
	"testing"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"

	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

func TestWithStatusText(t *testing.T) {
	tc := toolcallmarkup.ToolCall{ID: "1", Type: "search_documents", Status: toolcallmarkup.StatusRunning,
		Attrs: []toolcallmarkup.Attr{{Key: "query", Value: "<q>"}}}
	tests := []struct {
		name string
		opts []Option
		call toolcallmarkup.ToolCall
		want string
	}{
		{"default", nil, tc, "Searching knowledge base for:\n&lt;q&gt;"},
		{"per type", []Option{WithStatusText("search_documents", func(tc toolcallmarkup.ToolCall) string {
			return "Looking up " + statustext.Attr(tc, "query")
		})}, tc, "Looking up &lt;q&gt;"},
		{"per type removed", []Option{WithStatusText("search_documents", nil)}, tc, "Running search_documents…"},
		{"default text", []Option{WithDefaultStatusText(func(tc toolcallmarkup.ToolCall) string { return "busy " + tc.Type })},
			toolcallmarkup.ToolCall{ID: "2", Type: "other", Status: toolcallmarkup.StatusRunning}, "busy other"},
		{"default text reset", []Option{WithDefaultStatusText(nil)},
			toolcallmarkup.ToolCall{ID: "2", Type: "other", Status: toolcallmarkup.StatusSuccess}, "other finished"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := mustRender(t, New(tt.opts...), toolcallmarkup.Markup(tt.call))
			if !strings.Contains(out, `<span class="toolcall__text">`+tt.want+`</span>`) {
				t.Errorf("got %s, want status text %s", out, tt.want)
			}
		})
	}
}

func TestWithPolicy(t *testing.T) {
	strict := bluemonday.StrictPolicy()
	out := mustRender(t, New(WithPolicy(strict)), "*a* "+toolcallmarkup.Markup(toolcallmarkup.ToolCall{
		ID: "1", Type: "x", Status: toolcallmarkup.StatusSuccess}))
	if got, want := out, "a ✓Succeeded: x finished"; strings.TrimSpace(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestToolCallExtension(t *testing.T) {
	// The extension on its own, in a goldmark setup of the caller's.
	md := goldmark.New(goldmark.WithExtensions(NewToolCall(WithDefaultStatusText(func(toolcallmarkup.ToolCall) string { return "custom" }))))
	got := mustConvert(t, md, "```\n"+toolcallmarkup.Markup(toolcallmarkup.ToolCall{ID: "1", Type: "x", Status: toolcallmarkup.StatusPending})+"\n")
	want := "<pre><code></code></pre>\n" +
		`<div class="toolcall toolcall--pending" data-tool-call-id="1" data-status="pending" data-tool-type="x">` +
		`<span class="toolcall__icon toolcall__icon--spinner" aria-hidden="true"></span><span class="toolcall__label">Pending: </span><span class="toolcall__text">custom</span></div>` + "\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestAllowedURL(t *testing.T) {
	tests := []struct {
		url  string
		want bool
	}{
		{"https://example.com", true},
		{"HTTP://example.com", true},
		{"mailto:a@example.com", true},
		{"/relative/path", true},
		{"relative", true},
		{"#frag", true},
		{"?q=1", true},
		{"//example.com/x", true},
		{"./a:b", true},
		{"javascript:alert(1)", false},
		{"JavaScript:alert(1)", false},
		{" \t\x01javascript:alert(1)", false},
		{"vbscript:x", false},
		{"data:text/html,x", false},
		{"file:///etc/passwd", false},
		{"java%0ascript:alert(1)", false},
		{"ftp://example.com", false},
		{"a:b", false},
	}
	for _, tt := range tests {
		if got := AllowedURL([]byte(tt.url)); got != tt.want {
			t.Errorf("AllowedURL(%q) = %v, want %v", tt.url, got, tt.want)
		}
	}
}

// TestRenderConcurrent renders from many goroutines with one Renderer (run
// with -race).
func TestRenderConcurrent(t *testing.T) {
	r := New()
	content := "Hi\n\n" + toolcallmarkup.Markup(toolcallmarkup.ToolCall{ID: "1", Type: "x", Status: toolcallmarkup.StatusRunning}) + "\n\n`code`"
	want := mustRender(t, r, content)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if got, err := r.Render(content); err != nil || got != want {
					t.Errorf("got %q, %v; want %q", got, err, want)
					return
				}
				if got, err := Render(content); err != nil || got != want {
					t.Errorf("Render: got %q, %v; want %q", got, err, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestSplice(t *testing.T) {
	widgets := []string{"<b>0</b>", "<i>1</i>"}
	tests := []struct {
		name, out, want string
		ok              bool
	}{
		{"in order", "a pn0z b pn1z c", "a <b>0</b> b <i>1</i> c", true},
		{"any order", "pn1zpn0z", "<i>1</i><b>0</b>", true},
		{"missing", "a pn0z", "", false},
		{"twice", "pn0zpn0zpn1z", "", false},
		{"out of range", "pn0zpn1zpn2z", "", false},
		{"unterminated", "pn0zpn1", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := splice(tt.out, "pn", widgets)
			if got != tt.want || ok != tt.ok {
				t.Errorf("got %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestMarkerText checks that model text looking like a widget marker stays
// text: markers carry a random part chosen for each Render call.
func TestMarkerText(t *testing.T) {
	tag := toolcallmarkup.Markup(toolcallmarkup.ToolCall{ID: "1", Type: "x", Status: toolcallmarkup.StatusRunning})
	out := mustRender(t, New(), "tcw0n0z tcwn0z\n\n"+tag+"\n\ntcw1n1z")
	if widgets(out) != 1 || !strings.Contains(out, "<p>tcw0n0z tcwn0z</p>") || !strings.Contains(out, "<p>tcw1n1z</p>") {
		t.Errorf("got %s", out)
	}
}

func TestCRLF(t *testing.T) {
	tag := toolcallmarkup.Markup(toolcallmarkup.ToolCall{ID: "1", Type: "x", Status: toolcallmarkup.StatusRunning})
	lf := mustRender(t, New(), "Intro\n\n"+tag+"\n\n```\ncode\n\n"+tag+"\n")
	crlf := mustRender(t, New(), "Intro\r\n\r\n"+tag+"\r\n\r\n```\r\ncode\r\n\r\n"+tag+"\r\n")
	if widgets(crlf) != 2 || strings.ReplaceAll(crlf, "\r", "") != lf {
		t.Errorf("CRLF content renders differently:\ngot  %q\nwant %q", crlf, lf)
	}
}

func TestHighlight(t *testing.T) {
	tests := []struct {
		name, md string
		want     []string // substrings of the output
		not      []string
	}{
		{"known language", "```go\nfunc f() {}\n```", []string{`<pre class="chroma"><code class="language-go">`, `<span class="kd">func</span>`}, nil},
		{"unknown language", "```nosuchlang\nx\n```", []string{`<pre><code class="language-nosuchlang">x`}, []string{"chroma"}},
		{"no language", "```\nx\n```", []string{"<pre><code>x\n</code></pre>"}, []string{"chroma"}},
		{"model options ignored", "```go {linenos=true style=monokai}\nx\n```", []string{`class="language-go"`}, []string{"<table", "style="}},
		{"neutralised tag shows as written", "```html\n" + toolcallmarkup.Neutralise(`<ToolCall type="x" status="running" toolCallId="c">`) + "\n```",
			[]string{"&lt;</span>", "ToolCall"}, []string{"&amp;lt;"}},
		{"script in code stays text", "```js\n</code></pre><script>alert(1)</script>\n```", []string{"&lt;/"}, []string{"<script"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := mustRender(t, New(), tt.md)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("got %s, want it to contain %s", out, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(out, n) {
					t.Errorf("got %s, want no %s", out, n)
				}
			}
			if p := checkSafe(out); len(p) != 0 {
				t.Errorf("unsafe output: %v", p)
			}
		})
	}
	if out := mustRender(t, New(WithHighlighting(false)), "```go\nx\n```"); strings.Contains(out, "chroma") {
		t.Errorf("highlighting off: got %s", out)
	}
}

func TestLinksOpenInANewTab(t *testing.T) {
	out := mustRender(t, New(), "[a](https://example.com/x) <https://example.org> https://example.net [rel](/docs)")
	if n := strings.Count(out, `target="_blank" rel="nofollow noopener noreferrer"`); n != 4 {
		t.Errorf("got %s, want 4 links opening in a new tab", out)
	}
}
