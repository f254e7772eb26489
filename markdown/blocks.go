package markdown

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// TopBlock is one top-level block of a parse, rendered on its own: the
// offset of the line it starts on, its HTML (exactly the part of Render's
// output it accounts for), and what decides whether the source may be cut
// before it (a live view cuts a streaming answer into blocks there).
type TopBlock struct {
	Start       int // offset of the first byte of the block's first line
	HTML        string
	BlankBefore bool // a blank line separates it from the block before
	Closed      bool // it ends with no paragraph open: a heading, rule, code block, HTML block or widget
}

// RenderBlocks renders src as Render does, one top-level block at a time,
// with the link reference definitions refs known before the parse. It
// returns the blocks and every reference definition the parse knows
// afterwards (refs included). The concatenation of the blocks' HTML is what
// Render returns for src given the same definitions.
func (r *Renderer) RenderBlocks(src []byte, refs []parser.Reference) ([]TopBlock, []parser.Reference, error) {
	return r.renderBlocks(src, refs, false)
}

// LiveHighlightMax is the most code, in bytes, of a fenced code block left
// open at the end of a streaming answer that RenderLiveBlocks highlights.
const LiveHighlightMax = 4 << 10

// RenderLiveBlocks is RenderBlocks for the end of an answer still being
// written: a fenced code block still open at the end of src, with more
// than LiveHighlightMax bytes of code, is rendered as plain code, not
// highlighted, until its closing fence comes (a finished answer is
// rendered with RenderBlocks). A live view renders its trailing block at
// every frame; highlighting a growing block of n bytes again and again
// cost about n² over the answer, most of a page's server CPU for a long
// block of code.
func (r *Renderer) RenderLiveBlocks(src []byte, refs []parser.Reference) ([]TopBlock, []parser.Reference, error) {
	return r.renderBlocks(src, refs, true)
}

func (r *Renderer) renderBlocks(src []byte, refs []parser.Reference, live bool) ([]TopBlock, []parser.Reference, error) {
	blocks, all, ok, err := r.renderBlocksWith(src, refs, r.splice, live)
	if err == nil && !ok {
		// A marker did not survive the policy: render the widgets in place
		// and sanitise everything, as Render does.
		blocks, all, _, err = r.renderBlocksWith(src, refs, false, live)
	}
	return blocks, all, err
}

func (r *Renderer) renderBlocksWith(src []byte, refs []parser.Reference, withSplice, live bool) ([]TopBlock, []parser.Reference, bool, error) {
	pc := parser.NewContext()
	for _, ref := range refs {
		pc.AddReference(ref)
	}
	doc := r.md.Parser().Parse(text.NewReader(src), parser.WithContext(pc))
	if code, ok := doc.LastChild().(*ast.FencedCodeBlock); live && ok && openLongFence(code, src) {
		code.SetAttributeString(plainCode, true)
	}
	var blocks []TopBlock
	for c := doc.FirstChild(); c != nil; c = c.NextSibling() {
		blocks = append(blocks, TopBlock{Start: lineStart(src, c.Pos()), BlankBefore: c.HasBlankPreviousLines(), Closed: closedAlone(c)})
	}
	var prefix string
	var widgets []string
	if withSplice {
		prefix, widgets = r.detachWidgets(doc)
	}
	placed := make([]bool, len(widgets))
	var buf bytes.Buffer
	i := 0
	for c := doc.FirstChild(); c != nil; c = c.NextSibling() {
		buf.Reset()
		if err := r.renderNode(&buf, src, c); err != nil {
			return nil, nil, false, fmt.Errorf("rendering markdown: %w", err)
		}
		out := r.policy.SanitizeReader(&buf).String()
		if len(widgets) > 0 {
			var ok bool
			if out, ok = spliceSome(out, prefix, widgets, placed); !ok {
				return nil, nil, false, nil
			}
		}
		blocks[i].HTML = out
		i++
	}
	for _, p := range placed {
		if !p {
			return nil, nil, false, nil
		}
	}
	if len(blocks) > 0 {
		blocks[0].Start = 0
	}
	return blocks, pc.References(), true, nil
}

// lineStart returns the offset of the start of the line holding offset pos
// (-1 when pos is unknown).
func lineStart(src []byte, pos int) int {
	if pos < 0 || pos > len(src) {
		return -1
	}
	return bytes.LastIndexByte(src[:pos], '\n') + 1
}

// closedAlone reports whether n ends with nothing left open that the next
// line could continue or that would change how the next line is read.
func closedAlone(n ast.Node) bool {
	switch n.Kind() {
	case ast.KindHeading, ast.KindThematicBreak, ast.KindFencedCodeBlock, ast.KindCodeBlock, ast.KindHTMLBlock, KindToolCall:
		return true
	}
	return false
}

// newMarkerPrefix returns the random prefix of one render's widget markers.
func newMarkerPrefix() string {
	return "tcw" + strconv.FormatUint(rand.Uint64(), 36) + "n"
}

// plainCode is the attribute by which RenderLiveBlocks asks the renderer
// not to highlight a code block.
const plainCode = "toolmark-plain-code"

// openLongFence reports whether code, the last block of src, holds more
// than LiveHighlightMax bytes of code and no closing fence follows them:
// the lines of a fence left open run to the end of src, so only a closing
// fence can come after the last of them.
func openLongFence(code *ast.FencedCodeBlock, src []byte) bool {
	lines := code.Lines()
	if lines.Len() == 0 {
		return false
	}
	first, last := lines.At(0), lines.At(lines.Len()-1)
	return last.Stop-first.Start > LiveHighlightMax && len(bytes.TrimSpace(src[last.Stop:])) == 0
}
