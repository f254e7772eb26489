package markdown

import (
	"bytes"
	"regexp"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"

	"github.com/toolmark/toolmark/toolcallmarkup"
)

// safeRenderer renders what a model may write but a page must not execute:
// raw HTML is shown as text, and links, images and autolinks keep their URL
// only when it is http, https, mailto or relative (otherwise the link text or
// the image's alt text is rendered as plain text). Links open in a new tab,
// with rel="nofollow noopener noreferrer".
type safeRenderer struct {
	html.Config
}

func newSafeRenderer() renderer.NodeRenderer {
	return &safeRenderer{Config: html.NewConfig()}
}

func (r *safeRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, r.renderRawHTML)
	reg.Register(ast.KindHTMLBlock, r.renderHTMLBlock)
	reg.Register(ast.KindLink, r.renderLink)
	reg.Register(ast.KindImage, r.renderImage)
	reg.Register(ast.KindAutoLink, r.renderAutoLink)
	reg.Register(kindWidgetRef, r.renderWidgetRef)
}

func (r *safeRenderer) renderWidgetRef(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		n := node.(*widgetRef)
		_, _ = w.WriteString(n.marker)
		if !n.inline {
			_ = w.WriteByte('\n')
		}
	}
	return ast.WalkSkipChildren, nil
}

// writeRaw writes model-written HTML as text, the way the model wrote it.
func (r *safeRenderer) writeRaw(w util.BufWriter, b []byte) {
	if bytes.IndexByte(b, '&') >= 0 {
		b = []byte(toolcallmarkup.RestoreText(string(b)))
	}
	r.Writer.RawWrite(w, b)
}

func (r *safeRenderer) renderRawHTML(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*ast.RawHTML)
	for i := 0; i < n.Segments.Len(); i++ {
		seg := n.Segments.At(i)
		r.writeRaw(w, seg.Value(source))
	}
	return ast.WalkSkipChildren, nil
}

func (r *safeRenderer) renderHTMLBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.HTMLBlock)
	if !entering {
		return ast.WalkContinue, nil
	}
	var b []byte
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		b = append(b, seg.Value(source)...)
	}
	if n.HasClosure() {
		b = append(b, n.ClosureLine.Value(source)...)
	}
	b = bytes.TrimRight(b, "\r\n")
	_, _ = w.WriteString("<p>")
	r.writeRaw(w, b)
	_, _ = w.WriteString("</p>\n")
	return ast.WalkContinue, nil
}

// AllowedURL reports whether a link or image may point to url: http, https,
// mailto, or a relative URL (no scheme). Anything with another scheme, or
// with something before a ':' that is not a plain scheme, is refused.
func AllowedURL(url []byte) bool {
	u := bytes.TrimLeft(url, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\v\f\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
	colon := bytes.IndexByte(u, ':')
	if colon < 0 {
		return true
	}
	if i := bytes.IndexAny(u[:colon], "/?#"); i >= 0 {
		return true
	}
	scheme := string(bytes.ToLower(u[:colon]))
	return scheme == "http" || scheme == "https" || scheme == "mailto"
}

func (r *safeRenderer) renderLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Link)
	dest := util.URLEscape(n.Destination, true)
	if !AllowedURL(dest) {
		return ast.WalkContinue, nil // the link text only
	}
	if !entering {
		_, _ = w.WriteString("</a>")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString(`<a href="`)
	_, _ = w.Write(util.EscapeHTML(dest))
	_ = w.WriteByte('"')
	if n.Title != nil {
		_, _ = w.WriteString(` title="`)
		r.Writer.Write(w, n.Title)
		_ = w.WriteByte('"')
	}
	_, _ = w.WriteString(linkAttrs + ">")
	return ast.WalkContinue, nil
}

// linkAttrs are the attributes of every link: it opens in a new tab that
// learns nothing of the page it came from.
const linkAttrs = ` target="_blank" rel="nofollow noopener noreferrer"`

func (r *safeRenderer) renderImage(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Image)
	dest := util.URLEscape(n.Destination, true)
	if !AllowedURL(dest) {
		return ast.WalkContinue, nil // the alt text only
	}
	if !entering {
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString(`<img src="`)
	_, _ = w.Write(util.EscapeHTML(dest))
	_, _ = w.WriteString(`" alt="`)
	r.writeAlt(w, source, n)
	_ = w.WriteByte('"')
	if n.Title != nil {
		_, _ = w.WriteString(` title="`)
		r.Writer.Write(w, n.Title)
		_ = w.WriteByte('"')
	}
	if r.XHTML {
		_, _ = w.WriteString(" />")
	} else {
		_, _ = w.WriteString(">")
	}
	return ast.WalkSkipChildren, nil
}

// writeAlt writes the plain text of an image's description, as goldmark does.
func (r *safeRenderer) writeAlt(w util.BufWriter, source []byte, n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch t := c.(type) {
		case *ast.Text:
			if t.IsRaw() {
				r.Writer.RawWrite(w, t.Value(source))
			} else {
				r.Writer.Write(w, t.Value(source))
			}
		case *ast.String:
			r.Writer.Write(w, t.Value)
		case *Node:
			r.Writer.RawWrite(w, []byte(t.Call.Type))
		default:
			r.writeAlt(w, source, c)
		}
	}
}

func (r *safeRenderer) renderAutoLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.AutoLink)
	if !entering {
		return ast.WalkContinue, nil
	}
	url := util.URLEscape(n.URL(source), false)
	label := n.Label(source)
	if n.AutoLinkType == ast.AutoLinkEmail && !bytes.HasPrefix(bytes.ToLower(url), []byte("mailto:")) {
		url = append([]byte("mailto:"), url...)
	}
	if !AllowedURL(url) {
		_, _ = w.Write(util.EscapeHTML(label))
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString(`<a href="`)
	_, _ = w.Write(util.EscapeHTML(url))
	_, _ = w.WriteString(`"` + linkAttrs + ">")
	_, _ = w.Write(util.EscapeHTML(label))
	_, _ = w.WriteString(`</a>`)
	return ast.WalkContinue, nil
}

var (
	widgetClass   = regexp.MustCompile(`^toolcall[a-z_ -]*$`)
	codeClass     = regexp.MustCompile(`^[a-z][a-z0-9]{0,5}$`) // chroma's token classes: k, nx, s2, line, …
	languageClass = regexp.MustCompile(`^language-[\w.+#-]+$`)
	relValue      = regexp.MustCompile(`^nofollow noopener noreferrer$`)
	alignValue    = regexp.MustCompile(`^(left|right|center)$`)
	plainValue    = regexp.MustCompile(`^[^\x00-\x1f\x7f]*$`)
)

// DefaultPolicy returns the HTML policy of the final sanitising pass: the
// bluemonday UGC policy (links limited to http, https, mailto and relative
// URLs, nofollow on links) plus target="_blank" and rel="nofollow noopener
// noreferrer" on links; on div, span, ul and li only, the widget's classes,
// data-tool-call-id, data-parent-tool-call-id, data-status, data-tool-type,
// data-images (a number) and
// aria-hidden="true"; the language-* class of
// code blocks, class="chroma" on pre and the short token classes of
// highlighted code on span.
func DefaultPolicy() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	p.AllowURLSchemes("http", "https", "mailto")
	p.AllowRelativeURLs(true)
	p.RequireNoFollowOnLinks(true)
	p.AllowAttrs("rel").Matching(relValue).OnElements("a")
	p.AllowAttrs("target").Matching(regexp.MustCompile(`^_blank$`)).OnElements("a")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^chroma$`)).OnElements("pre")
	p.AllowAttrs("class").Matching(codeClass).OnElements("span")
	p.AllowAttrs("class").Matching(widgetClass).OnElements("div", "span", "ul", "li")
	p.AllowAttrs("class").Matching(languageClass).OnElements("code")
	p.AllowAttrs("data-tool-call-id", "data-parent-tool-call-id", "data-status", "data-tool-type").
		Matching(plainValue).OnElements("div", "span")
	p.AllowAttrs("data-images").Matching(regexp.MustCompile(`^[0-9]{1,2}$`)).OnElements("div", "span")
	p.AllowAttrs("aria-hidden").Matching(regexp.MustCompile(`^true$`)).OnElements("span")
	p.AllowAttrs("align").Matching(alignValue).OnElements("th", "td")
	allowMathAndTaskLists(p)
	return p
}
