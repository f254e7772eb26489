package markdown

import (
	"bytes"
	"testing"

	"github.com/toolmark/toolmark/internal/harness/mdcases"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/renderer/html"
)

func mustReadSpec(tb testing.TB) []mdcases.SpecExample {
	tb.Helper()
	return mdcases.ReadSpec(tb, "testdata/spec.json")
}

func mustConvert(tb testing.TB, md goldmark.Markdown, src string) string {
	tb.Helper()
	var buf bytes.Buffer
	if err := md.Convert([]byte(src), &buf); err != nil {
		tb.Fatalf("Convert(%q): %v", src, err)
	}
	return buf.String()
}

// TestCommonMarkSpec runs the CommonMark spec with the extension on: every
// example that plain goldmark passes passes with the ToolCall extension too.
// Both use the renderer options of goldmark's own spec test (XHTML, unsafe).
// Highlighting is off: it changes fenced code with a known language on
// purpose (TestHighlight).
func TestCommonMarkSpec(t *testing.T) {
	opts := goldmark.WithRendererOptions(html.WithXHTML(), html.WithUnsafe())
	plain := goldmark.New(opts)
	ext := goldmark.New(opts, goldmark.WithExtensions(NewToolCall(WithHighlighting(false))))
	passPlain, passExt := 0, 0
	for _, ex := range mustReadSpec(t) {
		want := ex.HTML
		okPlain := mustConvert(t, plain, ex.Markdown) == want
		got := mustConvert(t, ext, ex.Markdown)
		okExt := got == want
		if okPlain {
			passPlain++
		}
		if okExt {
			passExt++
		}
		if okPlain && !okExt {
			t.Errorf("example %d (%s): passes without the extension, fails with it\nmarkdown: %q\ngot:  %q\nwant: %q",
				ex.Example, ex.Section, ex.Markdown, got, want)
		}
	}
	t.Logf("CommonMark spec: plain goldmark passes %d examples, with the ToolCall extension %d", passPlain, passExt)
}

// TestCommonMarkSpecRenderer compares, for every spec example, the goldmark
// setup of a Renderer with and without the ToolCall extension (GFM
// extensions, raw HTML shown as text, URL filter): the output is identical
// (highlighting off, as in TestCommonMarkSpec).
func TestCommonMarkSpecRenderer(t *testing.T) {
	without := newGoldmark(nil, false)
	with := newGoldmark(newHTMLRenderer(newConfig([]Option{WithHighlighting(false)})), true)
	same := 0
	examples := mustReadSpec(t)
	for _, ex := range examples {
		a, b := mustConvert(t, without, ex.Markdown), mustConvert(t, with, ex.Markdown)
		if a != b {
			t.Errorf("example %d (%s): output differs with the extension\nmarkdown: %q\nwithout: %q\nwith:    %q",
				ex.Example, ex.Section, ex.Markdown, a, b)
			continue
		}
		same++
	}
	t.Logf("Renderer setup: %d of %d spec examples render identically with and without the extension", same, len(examples))
}
