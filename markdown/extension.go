package markdown

import (
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// Priorities of the parsers and the renderer this extension adds: the block
// parser runs before the HTML block parser (900), the inline parser before
// the autolink (300) and raw HTML (400) parsers, and the renderer overrides
// the default HTML renderer (1000).
const (
	blockParserPriority  = 850
	inlineParserPriority = 250
	rendererPriority     = 500
)

type toolCall struct {
	opts []Option
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
		parser.WithInlineParsers(util.Prioritized(NewToolCallParser(), inlineParserPriority)),
	)
	m.Renderer().AddOptions(renderer.WithNodeRenderers(
		util.Prioritized(NewHTMLRenderer(e.opts...), rendererPriority),
	))
}
