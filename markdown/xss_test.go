package markdown

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// mustReadVectors reads testdata/xss.txt: one vector per line, "\n" in a
// vector standing for a newline; blank lines and "# " comments are skipped.
func mustReadVectors(tb testing.TB) []string {
	tb.Helper()
	f, err := os.Open("testdata/xss.txt")
	if err != nil {
		tb.Fatalf("opening vectors: %v", err)
	}
	defer f.Close()
	var vectors []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "# ") {
			continue
		}
		vectors = append(vectors, strings.ReplaceAll(line, `\n`, "\n"))
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("reading vectors: %v", err)
	}
	return vectors
}

// widgets counts the tool-call widgets in rendered HTML.
func widgets(out string) int {
	return strings.Count(out, `class="toolcall toolcall--`)
}

// injection places a vector somewhere in a message. widgets is how many
// widgets the message must render, or -1 when that depends on whether the
// vector is a valid attribute value (a type or an id).
type injection struct {
	name    string
	content func(v string) string
	widgets int
}

func call(attrs ...toolcallmarkup.Attr) toolcallmarkup.ToolCall {
	return toolcallmarkup.ToolCall{ID: "call_1", Type: "search_documents", Status: toolcallmarkup.StatusRunning, Attrs: attrs}
}

var injections = []injection{
	{"model text", func(v string) string { return "Hello " + toolcallmarkup.Neutralise(v) + " bye" }, 0},
	{"model text block", func(v string) string { return "Before\n\n" + toolcallmarkup.Neutralise(v) + "\n\nafter" }, 0},
	{"model text before a tag", func(v string) string {
		return toolcallmarkup.Neutralise(v) + "\n\n" + toolcallmarkup.Markup(call()) + "\n\nafter"
	}, 1},
	{"model text around an inline tag", func(v string) string {
		n := toolcallmarkup.Neutralise(v)
		return n + " " + toolcallmarkup.Markup(call()) + " " + n
	}, 1},
	{"code span", func(v string) string { return "`" + toolcallmarkup.Neutralise(v) + "`" }, 0},
	{"fenced code", func(v string) string { return "```\n" + toolcallmarkup.Neutralise(v) + "\n```" }, 0},
	{"link destination", func(v string) string { return "[x](" + toolcallmarkup.Neutralise(v) + ")" }, 0},
	{"image destination", func(v string) string { return "![x](" + toolcallmarkup.Neutralise(v) + ")" }, 0},
	{"autolink", func(v string) string { return "<" + toolcallmarkup.Neutralise(v) + ">" }, 0},
	{"unneutralised content", func(v string) string { return v }, -1},
	{"query", func(v string) string {
		return toolcallmarkup.Markup(call(toolcallmarkup.Attr{Key: "query", Value: v}))
	}, 1},
	{"inline query", func(v string) string {
		return "See " + toolcallmarkup.Markup(call(toolcallmarkup.Attr{Key: "query", Value: v})) + " here"
	}, 1},
	{"fetch url", func(v string) string {
		tc := call(toolcallmarkup.Attr{Key: "url", Value: v})
		tc.Type = "fetch_url"
		return toolcallmarkup.Markup(tc)
	}, 1},
	{"sub-agent task with a child", func(v string) string {
		parent := call(toolcallmarkup.Attr{Key: "task", Value: v})
		parent.Type, parent.ID = "subagent", "a"
		child := call(toolcallmarkup.Attr{Key: "query", Value: v})
		child.ID, child.ParentID = "b", "a"
		open := toolcallmarkup.OpenTag(parent)
		return open + toolcallmarkup.Markup(child) + "</ToolCall>"
	}, 2},
	{"count", func(v string) string {
		tc := call(toolcallmarkup.Attr{Key: "count", Value: v})
		tc.Status = toolcallmarkup.StatusSuccess
		return toolcallmarkup.Markup(tc)
	}, 1},
	{"error text", func(v string) string {
		tc := call()
		tc.Status, tc.Error = toolcallmarkup.StatusError, v
		return toolcallmarkup.Markup(tc)
	}, 1},
	{"extra attributes", func(v string) string {
		return toolcallmarkup.Markup(call(
			toolcallmarkup.Attr{Key: "onclick", Value: v},
			toolcallmarkup.Attr{Key: "onerror", Value: v},
			toolcallmarkup.Attr{Key: "style", Value: v},
			toolcallmarkup.Attr{Key: "href", Value: v},
			toolcallmarkup.Attr{Key: "src", Value: v},
			toolcallmarkup.Attr{Key: "class", Value: v},
		))
	}, 1},
	{"tool type", func(v string) string {
		tc := call()
		tc.Type = v
		return toolcallmarkup.Markup(tc)
	}, -1},
	{"tool call id", func(v string) string {
		tc := call()
		tc.ID = v
		return toolcallmarkup.Markup(tc)
	}, -1},
}

// TestXSS injects every vector of testdata/xss.txt through model text, tool
// arguments, error text and extra attributes: the output holds nothing
// executable, and model text never becomes a widget.
func TestXSS(t *testing.T) {
	vectors := mustReadVectors(t)
	if len(vectors) < 100 {
		t.Fatalf("got %d vectors, want at least 100", len(vectors))
	}
	echo := New(WithDefaultStatusText(func(tc toolcallmarkup.ToolCall) string {
		return tc.Type + statustext.Attr(tc, "query") + statustext.Attr(tc, "onclick") + tc.Error
	}))
	renderers := map[string]*Renderer{"default": New(), "echoing status text": echo}
	checked := 0
	for rname, r := range renderers {
		for _, inj := range injections {
			for i, v := range vectors {
				content := inj.content(v)
				out := mustRender(t, r, content)
				checked++
				if p := checkSafe(out); len(p) != 0 {
					t.Errorf("%s/%s/vector %d %q: unsafe output %v\ncontent: %q\noutput: %s", rname, inj.name, i+1, v, p, content, out)
				}
				if inj.widgets >= 0 && widgets(out) != inj.widgets {
					t.Errorf("%s/%s/vector %d %q: got %d widgets, want %d\noutput: %s", rname, inj.name, i+1, v, widgets(out), inj.widgets, out)
				}
			}
		}
	}
	t.Logf("%d vectors × %d injections × %d renderers = %d renders checked", len(vectors), len(injections), len(renderers), checked)
}
