package markdown

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/toolmark/toolmark/toolcallmarkup"
)

// Renderer renders message content (markdown with ToolCall tags) to safe
// HTML. It is safe for concurrent use and meant to be reused.
type Renderer struct {
	md     goldmark.Markdown
	html   *HTMLRenderer
	policy *bluemonday.Policy
	splice bool // widgets are spliced in after the default policy
}

// New returns a Renderer configured by opts.
func New(opts ...Option) *Renderer {
	cfg := newConfig(opts)
	policy := cfg.Policy
	if policy == nil {
		policy = DefaultPolicy()
	}
	hr := newHTMLRenderer(cfg)
	return &Renderer{md: newGoldmark(hr, true), html: hr, policy: policy, splice: cfg.Policy == nil}
}

// newGoldmark returns the goldmark instance of a Renderer, with or without
// the ToolCall extension (the CommonMark regression test compares both).
func newGoldmark(hr *HTMLRenderer, withToolCall bool) goldmark.Markdown {
	exts := []goldmark.Extender{
		extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
		extension.Strikethrough,
		extension.Linkify,
		extension.TaskList, MathPassThrough,
	}
	if withToolCall {
		if hr == nil {
			hr = NewHTMLRenderer().(*HTMLRenderer)
		}
		exts = append(exts, &toolCall{html: hr})
	}
	md := goldmark.New(goldmark.WithExtensions(exts...))
	md.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(newSafeRenderer(), rendererPriority+1)))
	return md
}

// Render renders content to HTML: markdown with raw HTML off, genuine
// ToolCall tags as widgets, and the sanitising pass.
//
// With the default policy the widgets are written by the extension, every
// value escaped, and spliced into the sanitised HTML in place of a per-call
// random marker: the policy pass then costs nothing per widget, and model
// text cannot forge a marker. The result is still what the policy allows
// (DefaultPolicy lets the widget markup through; a test checks that
// sanitising the output again changes nothing). A policy set with WithPolicy
// sanitises the widgets too.
func (r *Renderer) Render(content string) (string, error) {
	src := []byte(toolcallmarkup.OneLineTags(content))
	doc := r.md.Parser().Parse(text.NewReader(src))
	var prefix string
	var widgets []string
	if r.splice {
		prefix, widgets = r.detachWidgets(doc)
	}
	var buf bytes.Buffer
	buf.Grow(len(content) + len(content)/4)
	if err := r.renderNode(&buf, src, doc); err != nil {
		return "", fmt.Errorf("rendering markdown: %w", err)
	}
	out := r.policy.SanitizeReader(&buf).String()
	if len(widgets) == 0 {
		return out, nil
	}
	if spliced, ok := splice(out, prefix, widgets); ok {
		return spliced, nil
	}
	// A marker did not survive the policy (a custom policy dropping text?):
	// render the widgets in place and sanitise everything instead.
	buf.Reset()
	if err := r.md.Convert(src, &buf); err != nil {
		return "", fmt.Errorf("rendering markdown: %w", err)
	}
	return r.policy.SanitizeReader(&buf).String(), nil
}

// bufWriters are the buffered writers goldmark renders through. Given a
// writer that is not one, it makes a writer of 4 KiB for every call: for
// every block of every frame of a live view, a tenth of its rendering.
var bufWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 4096) }}

// renderNode renders n, a node of src's document, to buf.
func (r *Renderer) renderNode(buf *bytes.Buffer, src []byte, n ast.Node) error {
	bw := bufWriters.Get().(*bufio.Writer)
	bw.Reset(buf)
	err := r.md.Renderer().Render(bw, src, n) // flushes bw
	bw.Reset(nil)
	bufWriters.Put(bw)
	return err
}

// kindWidgetRef is the kind of widgetRef.
var kindWidgetRef = ast.NewNodeKind("ToolCallWidgetRef")

// widgetRef stands in the AST for a widget rendered apart; it renders as its
// marker.
type widgetRef struct {
	ast.BaseBlock
	marker string
	inline bool
}

func (n *widgetRef) Kind() ast.NodeKind { return kindWidgetRef }

func (n *widgetRef) Type() ast.NodeType {
	if n.inline {
		return ast.TypeInline
	}
	return ast.TypeBlock
}

func (n *widgetRef) IsRaw() bool { return true }

func (n *widgetRef) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"Marker": n.marker}, nil)
}

// detachWidgets renders every outermost widget of doc and puts a widgetRef
// in its place. Markers are prefix, the widget's index and "z": letters and
// digits only, which neither goldmark nor the policy change.
func (r *Renderer) detachWidgets(doc ast.Node) (string, []string) {
	var nodes []*Node
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if w, ok := n.(*Node); ok && entering {
			if !w.closeOnly {
				nodes = append(nodes, w)
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	if len(nodes) == 0 {
		return "", nil
	}
	prefix := newMarkerPrefix()
	widgets := make([]string, len(nodes))
	for i, n := range nodes {
		var sb strings.Builder
		r.html.writeWidget(&sb, n)
		widgets[i] = sb.String()
		ref := &widgetRef{marker: prefix + strconv.Itoa(i) + "z", inline: n.Inline}
		n.Parent().ReplaceChild(n.Parent(), n, ref)
	}
	return prefix, widgets
}

// splice replaces each marker in out by its widget; it reports false unless
// every widget was placed exactly once.
func splice(out, prefix string, widgets []string) (string, bool) {
	placed := make([]bool, len(widgets))
	s, ok := spliceSome(out, prefix, widgets, placed)
	if !ok {
		return "", false
	}
	for _, p := range placed {
		if !p {
			return "", false
		}
	}
	return s, true
}

// spliceSome replaces each marker in out by its widget and records it in
// placed; it reports false when a marker is malformed or placed twice.
func spliceSome(out, prefix string, widgets []string, placed []bool) (string, bool) {
	if !strings.Contains(out, prefix) {
		return out, true
	}
	size := len(out)
	for _, w := range widgets {
		size += len(w)
	}
	var b strings.Builder
	b.Grow(size)
	for {
		i := strings.Index(out, prefix)
		if i < 0 {
			break
		}
		b.WriteString(out[:i])
		rest := out[i+len(prefix):]
		j := strings.IndexByte(rest, 'z')
		idx, err := strconv.Atoi(rest[:max(j, 0)])
		if j < 0 || err != nil || idx < 0 || idx >= len(widgets) || placed[idx] {
			return "", false
		}
		placed[idx] = true
		b.WriteString(widgets[idx])
		out = rest[j+1:]
	}
	b.WriteString(out)
	return b.String(), true
}

var defaultRenderer = sync.OnceValue(func() *Renderer { return New() })

// Default returns the default Renderer (New with no options), made once.
func Default() *Renderer { return defaultRenderer() }

// Render renders content with the default Renderer; it is what the api and
// the web page use.
func Render(content string) (string, error) {
	return defaultRenderer().Render(content)
}
