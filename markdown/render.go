package markdown

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// Renderer renders message content (markdown with ToolCall tags) to safe
// HTML. It is safe for concurrent use and meant to be reused.
type Renderer struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
}

// New returns a Renderer configured by opts.
func New(opts ...Option) *Renderer {
	cfg := newConfig(opts)
	policy := cfg.Policy
	if policy == nil {
		policy = DefaultPolicy()
	}
	return &Renderer{md: newGoldmark(opts, true), policy: policy}
}

// newGoldmark returns the goldmark instance of a Renderer, with or without
// the ToolCall extension (the CommonMark regression test compares both).
func newGoldmark(opts []Option, withToolCall bool) goldmark.Markdown {
	exts := []goldmark.Extender{
		extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
		extension.Strikethrough,
		extension.Linkify,
	}
	if withToolCall {
		exts = append(exts, NewToolCall(opts...))
	}
	md := goldmark.New(goldmark.WithExtensions(exts...))
	md.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(newSafeRenderer(), rendererPriority+1)))
	return md
}

// Render renders content to HTML: markdown with raw HTML off, genuine
// ToolCall tags as widgets, then the sanitising pass.
func (r *Renderer) Render(content string) (string, error) {
	var buf bytes.Buffer
	buf.Grow(len(content) + len(content)/4)
	if err := r.md.Convert([]byte(content), &buf); err != nil {
		return "", fmt.Errorf("rendering markdown: %w", err)
	}
	return r.policy.SanitizeReader(&buf).String(), nil
}

var defaultRenderer = sync.OnceValue(func() *Renderer { return New() })

// Render renders content with the default Renderer; it is what the api and
// the web page use.
func Render(content string) (string, error) {
	return defaultRenderer().Render(content)
}
