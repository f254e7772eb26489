package markdown

import (
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Priorities of the parsers and the renderer this extension adds: the block
// parser runs before the HTML block parser (900), the inline parser before
// the autolink (300) and raw HTML (400) parsers, and the renderer overrides
// the default HTML renderer (1000).
const (
	blockParserPriority    = 850
	inlineParserPriority   = 250
	rendererPriority       = 500
	astTransformerPriority = 500
)

type toolCall struct {
	opts []Option
	html *HTMLRenderer // set by New, so that a Renderer shares it
}

// ToolCall is a goldmark extension that renders genuine ToolCall elements as
// status widgets with the default status texts. Add it last, after the other
// extensions, so that its guards cover their parsers too.
var ToolCall = &toolCall{}

// NewToolCall returns a ToolCall extension configured by opts (WithStatusText,
// WithDefaultStatusText; WithPolicy has no effect here, sanitising is the
// Renderer's job).
func NewToolCall(opts ...Option) goldmark.Extender {
	return &toolCall{opts: opts}
}

// Extend implements goldmark.Extender.
func (e *toolCall) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(
		guardOption{},
		parser.WithBlockParsers(util.Prioritized(NewToolCallBlockParser(), blockParserPriority)),
		parser.WithInlineParsers(util.Prioritized(NewToolCallParser(), inlineParserPriority),
			util.Prioritized(defaultBackslashParser, inlineParserPriority)),
		parser.WithASTTransformers(util.Prioritized(imageTransformer{}, astTransformerPriority)),
	)
	hr := e.html
	if hr == nil {
		hr = newHTMLRenderer(newConfig(e.opts))
	}
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(hr, rendererPriority)))
}

// imageTransformer moves widgets out of image descriptions, which render as
// plain alt text: a genuine tag is never lost in an alt attribute. The
// widgets follow the image, in order.
type imageTransformer struct{}

func (imageTransformer) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	if st, ok := pc.Get(scanKey).(*scanState); !ok || len(st.spans) == 0 {
		return
	}
	var images []*ast.Image
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if img, ok := n.(*ast.Image); ok && entering {
			images = append(images, img)
		}
		return ast.WalkContinue, nil
	})
	for _, img := range images {
		var found []*Node
		_ = ast.Walk(img, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			if w, ok := n.(*Node); ok && entering {
				found = append(found, w)
				return ast.WalkSkipChildren, nil
			}
			return ast.WalkContinue, nil
		})
		after := ast.Node(img)
		for _, w := range found {
			w.Parent().RemoveChild(w.Parent(), w)
			img.Parent().InsertAfter(img.Parent(), after, w)
			after = w
		}
	}
}
