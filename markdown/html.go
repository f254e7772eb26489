package markdown

import (
	"bytes"
	stdhtml "html"
	"io"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"

	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// HTMLRenderer renders *Node as a status widget, and code spans and code
// blocks with toolcallmarkup.RestoreText applied, so that text the model
// wrote about <ToolCall …> in code shows exactly as written.
type HTMLRenderer struct {
	html.Config
	cfg       Config
	highlight renderer.NodeRendererFunc // goldmark-highlighting's fenced code renderer, or nil
}

// NewHTMLRenderer returns the renderer.NodeRenderer of the ToolCall extension.
func NewHTMLRenderer(opts ...Option) renderer.NodeRenderer {
	return newHTMLRenderer(newConfig(opts))
}

func newHTMLRenderer(cfg Config) *HTMLRenderer {
	r := &HTMLRenderer{Config: html.NewConfig(), cfg: cfg}
	if cfg.Highlight {
		r.highlight = newHighlighter()
	}
	return r
}

// RegisterFuncs implements renderer.NodeRenderer.RegisterFuncs.
func (r *HTMLRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(KindToolCall, r.renderToolCall)
	reg.Register(ast.KindCodeSpan, r.renderCodeSpan)
	reg.Register(ast.KindCodeBlock, r.renderCodeBlock)
	reg.Register(ast.KindFencedCodeBlock, r.renderFencedCodeBlock)
}

// statusLabels are the accessible names of the statuses.
var statusLabels = map[toolcallmarkup.Status]string{
	toolcallmarkup.StatusPending:   "Pending",
	toolcallmarkup.StatusRunning:   "Running",
	toolcallmarkup.StatusSuccess:   "Succeeded",
	toolcallmarkup.StatusError:     "Failed",
	toolcallmarkup.StatusCancelled: "Cancelled",
}

// statusIcons are the icon elements of the statuses; a page stylesheet
// animates the spinner and colours the marks (see Stylesheet).
var statusIcons = map[toolcallmarkup.Status]string{
	toolcallmarkup.StatusPending:   `<span class="toolcall__icon toolcall__icon--spinner" aria-hidden="true"></span>`,
	toolcallmarkup.StatusRunning:   `<span class="toolcall__icon toolcall__icon--spinner" aria-hidden="true"></span>`,
	toolcallmarkup.StatusSuccess:   `<span class="toolcall__icon toolcall__icon--success" aria-hidden="true">✓</span>`,
	toolcallmarkup.StatusError:     `<span class="toolcall__icon toolcall__icon--error" aria-hidden="true">✗</span>`,
	toolcallmarkup.StatusCancelled: `<span class="toolcall__icon toolcall__icon--cancelled" aria-hidden="true">⊘</span>`,
}

func (r *HTMLRenderer) statusText(tc toolcallmarkup.ToolCall) string {
	if f := r.cfg.StatusTexts[tc.Type]; f != nil {
		return f(tc)
	}
	if r.cfg.DefaultStatusText != nil {
		return r.cfg.DefaultStatusText(tc)
	}
	return statustext.Generic(tc)
}

func writeAttr(w stringWriter, name, value string) {
	_ = w.WriteByte(' ')
	_, _ = w.WriteString(name)
	_, _ = w.WriteString(`="`)
	_, _ = w.WriteString(stdhtml.EscapeString(value))
	_ = w.WriteByte('"')
}

func (r *HTMLRenderer) renderToolCall(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*Node)
	if !entering || n.closeOnly {
		return ast.WalkSkipChildren, nil
	}
	r.writeWidget(w, n)
	if !n.Inline {
		_ = w.WriteByte('\n')
	}
	return ast.WalkSkipChildren, nil
}

// imageCount reports whether n is the number of an images attribute: one
// or two digits.
func imageCount(n string) bool {
	if n == "" || len(n) > 2 {
		return false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// stringWriter is what writeWidget writes to: a util.BufWriter or a
// strings.Builder.
type stringWriter interface {
	io.StringWriter
	io.ByteWriter
}

// writeWidget writes the widget of n and, nested in it, of its children.
// Every value from the tag is escaped.
func (r *HTMLRenderer) writeWidget(w stringWriter, n *Node) {
	elem, kids, kid := "<div", "</div>", "li"
	if n.Inline {
		elem, kids, kid = "<span", "</span>", "span"
	}
	tc := n.Call
	status := statustext.Normalize(tc.Status)
	_, _ = w.WriteString(elem)
	_, _ = w.WriteString(` class="toolcall toolcall--`)
	_, _ = w.WriteString(string(status))
	if n.Inline {
		_, _ = w.WriteString(" toolcall--inline")
	}
	_ = w.WriteByte('"')
	writeAttr(w, "data-tool-call-id", tc.ID)
	if tc.ParentID != "" {
		writeAttr(w, "data-parent-tool-call-id", tc.ParentID)
	}
	_, _ = w.WriteString(` data-status="`)
	_, _ = w.WriteString(string(status))
	_ = w.WriteByte('"')
	writeAttr(w, "data-tool-type", tc.Type)
	if n := statustext.Attr(tc, "images"); status == toolcallmarkup.StatusSuccess && imageCount(n) {
		// The call returned images (a count); the page adds them.
		writeAttr(w, "data-images", n)
	}
	// The visible status text is the widget's accessible text, after its
	// state in words (the icon is hidden from screen readers). A widget is
	// no live region: a page with many would talk over itself, so the page
	// announces status changes in one region of its own.
	_ = w.WriteByte('>')
	_, _ = w.WriteString(statusIcons[status])
	_, _ = w.WriteString(`<span class="toolcall__label">`)
	_, _ = w.WriteString(statusLabels[status])
	_, _ = w.WriteString(`: </span><span class="toolcall__text">`)
	_, _ = w.WriteString(stdhtml.EscapeString(r.statusText(tc)))
	_, _ = w.WriteString(`</span>`)
	if status == toolcallmarkup.StatusError && tc.Error != "" {
		_, _ = w.WriteString(`<span class="toolcall__error">`)
		_, _ = w.WriteString(stdhtml.EscapeString(toolcallmarkup.Shorten(tc.Error, statustext.ErrorLimit)))
		_, _ = w.WriteString(`</span>`)
	}
	if n.HasChildren() {
		if n.Inline {
			_, _ = w.WriteString(`<span class="toolcall__children">`)
		} else {
			_, _ = w.WriteString(`<ul class="toolcall__children">`)
		}
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			child, ok := c.(*Node)
			if !ok || child.closeOnly {
				continue
			}
			_, _ = w.WriteString("<" + kid + ` class="toolcall__child">`)
			r.writeWidget(w, child)
			_, _ = w.WriteString("</" + kid + ">")
		}
		if n.Inline {
			_, _ = w.WriteString("</span>")
		} else {
			_, _ = w.WriteString("</ul>")
		}
	}
	_, _ = w.WriteString(kids)
}

// writeCode writes code text escaped, with the neutralisation of ToolCall
// tags undone.
func (r *HTMLRenderer) writeCode(w util.BufWriter, b []byte) {
	if bytes.IndexByte(b, '&') >= 0 {
		b = []byte(toolcallmarkup.RestoreText(string(b)))
	}
	r.Writer.RawWrite(w, b)
}

func (r *HTMLRenderer) renderCodeSpan(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		_, _ = w.WriteString("</code>")
		return ast.WalkContinue, nil
	}
	if n.Attributes() != nil {
		_, _ = w.WriteString("<code")
		html.RenderAttributes(w, n, html.CodeAttributeFilter)
		_ = w.WriteByte('>')
	} else {
		_, _ = w.WriteString("<code>")
	}
	var b []byte
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		t, ok := c.(*ast.Text)
		if !ok {
			continue
		}
		v := t.Segment.Value(source)
		if len(v) > 0 && v[len(v)-1] == '\n' {
			b = append(b, v[:len(v)-1]...)
			b = append(b, ' ')
		} else {
			b = append(b, v...)
		}
	}
	r.writeCode(w, b)
	return ast.WalkSkipChildren, nil
}

func (r *HTMLRenderer) writeLines(w util.BufWriter, source []byte, n ast.Node) {
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		r.writeCode(w, seg.Value(source))
	}
}

func (r *HTMLRenderer) renderCodeBlock(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		_, _ = w.WriteString("<pre><code>")
		r.writeLines(w, source, n)
	} else {
		_, _ = w.WriteString("</code></pre>\n")
	}
	return ast.WalkContinue, nil
}

func (r *HTMLRenderer) renderFencedCodeBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.FencedCodeBlock)
	if lang := r.highlightable(n, source); lang != nil {
		if entering {
			r.writeHighlighted(w, source, n, lang)
		}
		return ast.WalkContinue, nil
	}
	if !entering {
		_, _ = w.WriteString("</code></pre>\n")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString("<pre><code")
	if language := n.Language(source); language != nil {
		_, _ = w.WriteString(` class="language-`)
		r.Writer.Write(w, language)
		_ = w.WriteByte('"')
	}
	_ = w.WriteByte('>')
	r.writeLines(w, source, n)
	return ast.WalkContinue, nil
}
