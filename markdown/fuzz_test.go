package markdown

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolmark/toolmark/internal/harness/mdcases"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// FuzzRender states the renderer's invariants:
//
//   - Render never panics or fails, and its output parses as HTML with no
//     script-like element, no on* or style attribute, and no URL with a
//     scheme other than http, https or mailto — whatever the content;
//   - model text (neutralised, as a Document stores it) never becomes a
//     widget, wherever it stands around genuine tags;
//   - every genuine element is rendered exactly once, as one widget, whatever
//     model text surrounds it: no markdown construct swallows or drops it.
func FuzzRender(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	for _, file := range files {
		if filepath.Base(file) == "xss.txt" {
			continue
		}
		for _, c := range mdcases.Read(f, file) {
			f.Add(c.Markdown, "rust", uint8(0))
		}
	}
	for i, v := range mustReadVectors(f) {
		f.Add(v, v, uint8(i))
	}
	r := New()
	f.Fuzz(func(t *testing.T, text, value string, layout uint8) {
		out := mustRender(t, r, text)
		if p := checkSafe(out); len(p) != 0 {
			t.Fatalf("unsafe output %v\ncontent: %q\noutput: %s", p, text, out)
		}
		if utf8.ValidString(text) {
			if got, want := widgets(out), len(toolcallmarkup.Scan(text)); got != want {
				t.Fatalf("got %d widgets, want %d\ncontent: %q\noutput: %s", got, want, text, out)
			}
		}

		model := toolcallmarkup.Neutralise(text)
		tc := toolcallmarkup.ToolCall{ID: "call_1", Type: "search_documents", Status: toolcallmarkup.StatusRunning,
			Attrs: []toolcallmarkup.Attr{{Key: "query", Value: value}}}
		if layout&1 != 0 {
			tc.Status, tc.Error = toolcallmarkup.StatusError, value
		}
		tag := toolcallmarkup.Markup(tc)
		if layout&2 != 0 {
			child := toolcallmarkup.ToolCall{ID: "call_2", ParentID: "call_1", Type: "fetch_url",
				Status: toolcallmarkup.StatusSuccess, Attrs: []toolcallmarkup.Attr{{Key: "url", Value: value}}}
			tag = toolcallmarkup.OpenTag(tc) + toolcallmarkup.Markup(child) + "</ToolCall>"
		}
		seps := []string{"\n\n", " ", "\n", ""}
		sep := seps[int(layout>>2)%len(seps)]
		content := model + sep + tag + sep + model
		if !utf8.ValidString(content) {
			return
		}
		want := len(toolcallmarkup.Scan(content))
		if want != strings.Count(tag, "<ToolCall ") {
			t.Fatalf("Scan found %d elements, want %d (model text became a tag?)\ncontent: %q", want, strings.Count(tag, "<ToolCall "), content)
		}
		out = mustRender(t, r, content)
		if p := checkSafe(out); len(p) != 0 {
			t.Fatalf("unsafe output %v\ncontent: %q\noutput: %s", p, content, out)
		}
		if got := widgets(out); got != want {
			t.Fatalf("got %d widgets, want %d\ncontent: %q\noutput: %s", got, want, content, out)
		}
	})
}
