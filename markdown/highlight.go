package markdown

import (
	"bytes"
	"strings"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
	highlighting "github.com/yuin/goldmark-highlighting/v2"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/toolmark/toolmark/toolcallmarkup"
)

// Fenced code blocks whose language chroma knows are coloured on the server
// by goldmark-highlighting, with CSS classes rather than inline styles (the
// page's Content-Security-Policy allows no inline style):
//
//	<pre class="chroma"><code class="language-go"><span class="line"><span class="cl"><span class="kn">package</span> …
//
// The code it sees is the code as the model wrote it (the neutralisation of
// ToolCall tags undone, as for unhighlighted code); chroma escapes every
// token, and the HTML policy lets only its short class names through.
// Only the language word of the info string is used: options such as
// {linenos=true} or a style name written by a model are ignored.

// highlightStyle and highlightDarkStyle are the chroma styles
// HighlightStylesheet is made of.
const (
	highlightStyle     = "github"
	highlightDarkStyle = "github-dark"
)

// newHighlighter returns goldmark-highlighting's renderer function for
// fenced code blocks, configured for class-based output inside our own
// <pre class="chroma"><code class="language-…"> wrapper.
func newHighlighter() renderer.NodeRendererFunc {
	hr := highlighting.NewHTMLRenderer(
		highlighting.WithFormatOptions(chromahtml.WithClasses(true), chromahtml.PreventSurroundingPre(true)),
		highlighting.WithWrapperRenderer(func(w util.BufWriter, c highlighting.CodeBlockContext, entering bool) {
			if !entering {
				_, _ = w.WriteString("</code></pre>\n")
				return
			}
			_, _ = w.WriteString(`<pre class="chroma"><code`)
			if lang, ok := c.Language(); ok && len(lang) > 0 {
				_, _ = w.WriteString(` class="language-`)
				_, _ = w.Write(util.EscapeHTML(lang))
				_ = w.WriteByte('"')
			}
			_ = w.WriteByte('>')
		}),
	)
	var c captureFenced
	hr.RegisterFuncs(&c)
	return c.f
}

// captureFenced keeps the function a node renderer registers for fenced
// code blocks.
type captureFenced struct{ f renderer.NodeRendererFunc }

func (c *captureFenced) Register(k ast.NodeKind, f renderer.NodeRendererFunc) {
	if k == ast.KindFencedCodeBlock {
		c.f = f
	}
}

// highlightable returns the language of n when it is to be highlighted.
func (r *HTMLRenderer) highlightable(n *ast.FencedCodeBlock, source []byte) []byte {
	if r.highlight == nil {
		return nil
	}
	if _, plain := n.AttributeString(plainCode); plain {
		return nil
	}
	lang := n.Language(source)
	if len(lang) == 0 || len(lang) > 40 || lexers.Get(string(lang)) == nil {
		return nil
	}
	return lang
}

// writeHighlighted writes n highlighted: goldmark-highlighting renders a
// copy of the block whose source is the language word and the restored code.
func (r *HTMLRenderer) writeHighlighted(w util.BufWriter, source []byte, n *ast.FencedCodeBlock, lang []byte) {
	var src bytes.Buffer
	src.Write(lang)
	src.WriteByte('\n')
	type span struct{ start, stop int }
	var lines []span
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		line := seg.Value(source)
		if bytes.IndexByte(line, '&') >= 0 {
			line = []byte(toolcallmarkup.RestoreText(string(line)))
		}
		start := src.Len()
		src.Write(line)
		lines = append(lines, span{start, src.Len()})
	}
	b := src.Bytes()
	copyNode := ast.NewFencedCodeBlock(ast.NewTextSegment(text.NewSegment(0, len(lang))))
	for _, l := range lines {
		copyNode.Lines().Append(text.NewSegment(l.start, l.stop))
	}
	_, _ = r.highlight(w, b, copyNode, true)
}

// HighlightStylesheet returns the CSS of the highlighted code's classes:
// chroma's GitHub style, and its dark variant inside a
// prefers-color-scheme: dark media query.
func HighlightStylesheet() string {
	var b strings.Builder
	f := chromahtml.New(chromahtml.WithClasses(true))
	_ = f.WriteCSS(&b, styleOr(highlightStyle))
	var dark strings.Builder
	_ = f.WriteCSS(&dark, styleOr(highlightDarkStyle))
	b.WriteString("@media (prefers-color-scheme: dark) {\n")
	for _, line := range strings.Split(strings.TrimRight(dark.String(), "\n"), "\n") {
		b.WriteString("  " + line + "\n")
	}
	b.WriteString("}\n")
	return b.String()
}

func styleOr(name string) *chroma.Style {
	if s := styles.Get(name); s != nil {
		return s
	}
	return styles.Fallback
}
