package markdown

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// Guards keep model text from swallowing a genuine widget. Every block parser,
// inline parser and paragraph transformer already configured when the
// extension is added is wrapped:
//
//   - a raw block (fenced or indented code, HTML block) does not open on a line
//     holding a genuine tag, and ends before a line holding one;
//   - an inline parser (code span, raw HTML, autolink, link destination and
//     title, …) never reads past the next genuine tag of its block;
//   - a paragraph transformer (link reference definitions, tables) leaves a
//     paragraph alone when applying it would cut through a genuine element.

// guardOption is a parser.Option that wraps the configured parsers.
type guardOption struct{}

func (guardOption) SetParserOption(c *parser.Config) {
	for i, v := range c.BlockParsers {
		switch bp := v.Value.(type) {
		case *toolCallBlockParser, *blockGuard:
		case parser.BlockParser:
			c.BlockParsers[i].Value = &blockGuard{inner: bp, para: parser.NewParagraphParser()}
		}
	}
	for i, v := range c.InlineParsers {
		switch ip := v.Value.(type) {
		case *toolCallParser, *backslashParser, *inlineGuard:
		case parser.InlineParser:
			c.InlineParsers[i].Value = &inlineGuard{inner: ip, limitFirst: bytes.IndexByte(ip.Trigger(), ']') >= 0}
		}
	}
	for i, v := range c.ParagraphTransformers {
		switch pt := v.Value.(type) {
		case *transformerGuard:
		case parser.ParagraphTransformer:
			c.ParagraphTransformers[i].Value = &transformerGuard{inner: pt}
		}
	}
}

// blockGuard wraps a block parser so that its raw blocks respect genuine tags.
// When it refuses to open a raw block on a line holding a tag, the line
// becomes a paragraph (or continues the open one), so no text is lost.
type blockGuard struct {
	inner parser.BlockParser
	para  parser.BlockParser
}

func (g *blockGuard) Trigger() []byte { return g.inner.Trigger() }

func (g *blockGuard) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	st := stateOf(pc, reader.Source())
	if len(st.spans) == 0 {
		return g.inner.Open(parent, reader, pc)
	}
	l, pos := reader.Position()
	_, seg := reader.PeekLine()
	node, state := g.inner.Open(parent, reader, pc)
	if node != nil && node.IsRaw() && st.hasTagIn(seg) {
		reader.SetPosition(l, pos)
		if ast.IsParagraph(pc.LastOpenedBlock().Node) {
			return nil, parser.NoChildren // a lazy continuation line
		}
		return g.para.Open(parent, reader, pc)
	}
	return node, state
}

func (g *blockGuard) Continue(node ast.Node, reader text.Reader, pc parser.Context) parser.State {
	if ast.IsParagraph(node) {
		return g.para.Continue(node, reader, pc)
	}
	if node.IsRaw() {
		st := stateOf(pc, reader.Source())
		if _, seg := reader.PeekLine(); st.hasTagIn(seg) {
			return parser.Close
		}
	}
	return g.inner.Continue(node, reader, pc)
}

func (g *blockGuard) Close(node ast.Node, reader text.Reader, pc parser.Context) {
	if ast.IsParagraph(node) {
		g.para.Close(node, reader, pc)
		return
	}
	g.inner.Close(node, reader, pc)
}

func (g *blockGuard) CanInterruptParagraph() bool { return g.inner.CanInterruptParagraph() }

func (g *blockGuard) CanAcceptIndentedLine() bool { return g.inner.CanAcceptIndentedLine() }

func (g *blockGuard) SetOption(name parser.OptionName, value any) {
	if so, ok := g.inner.(parser.SetOptioner); ok {
		so.SetOption(name, value)
	}
}

// inlineGuard wraps an inline parser so that it never consumes a genuine tag.
// Parsers without side effects run on the real reader and run again on a
// reader cut at the next tag when they crossed it; the link parser (trigger
// ']', which moves nodes around when it succeeds) always runs on the cut
// reader when a tag lies ahead in its block.
type inlineGuard struct {
	inner      parser.InlineParser
	limitFirst bool
}

func (g *inlineGuard) Trigger() []byte { return g.inner.Trigger() }

func (g *inlineGuard) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	st := stateOf(pc, block.Source())
	if len(st.spans) == 0 {
		return g.inner.Parse(parent, block, pc)
	}
	l, pos := block.Position()
	lines := parent.Lines()
	if lines == nil || lines.Len() == 0 || l < 0 || l >= lines.Len() {
		return g.inner.Parse(parent, block, pc)
	}
	limit := st.firstIn(pos.Start+1, lines.At(lines.Len()-1).Stop)
	if limit < 0 {
		return g.inner.Parse(parent, block, pc)
	}
	if !g.limitFirst {
		node := g.inner.Parse(parent, block, pc)
		if node == nil {
			return nil
		}
		if al, after := block.Position(); al < lines.Len() && after.Start >= 0 && after.Start <= limit {
			return node
		}
		block.SetPosition(l, pos)
	}
	return g.parseLimited(parent, block, pc, l, pos, lines, limit)
}

// parseLimited runs the inner parser on a view of the block that ends at the
// absolute offset limit, then moves block to where the inner parser stopped.
// The view keeps the lines before the current one: the link parser reads the
// link label back from them.
func (g *inlineGuard) parseLimited(parent ast.Node, block text.Reader, pc parser.Context,
	l int, pos text.Segment, lines *text.Segments, limit int) ast.Node {
	segs := text.NewSegments()
	for x := 0; x < lines.Len(); x++ {
		s := lines.At(x)
		if s.Start >= limit && x > l {
			break
		}
		if s.Stop > limit {
			segs.Append(s.WithStop(limit))
			break
		}
		segs.Append(s)
	}
	view := text.NewBlockReader(block.Source(), segs)
	view.SetPosition(l, pos.WithStop(min(pos.Stop, limit)))
	node := g.inner.Parse(parent, view, pc)
	if node == nil {
		block.SetPosition(l, pos)
		return nil
	}
	vl, vpos := view.Position()
	if vl < segs.Len() && vpos.Start >= 0 && vpos.Start < limit {
		orig := lines.At(vl)
		block.SetPosition(vl, text.Segment{Start: vpos.Start, Stop: orig.Stop, Padding: vpos.Padding, ForceNewline: orig.ForceNewline})
		return node
	}
	// The inner parser consumed everything up to the tag.
	last := segs.Len() - 1
	if orig := lines.At(last); limit < orig.Stop {
		block.SetPosition(last, text.Segment{Start: limit, Stop: orig.Stop, ForceNewline: orig.ForceNewline})
	} else {
		block.SetPosition(last+1, text.NewSegment(-1, -1))
	}
	return node
}

func (g *inlineGuard) CloseBlock(parent ast.Node, block text.Reader, pc parser.Context) {
	if cb, ok := g.inner.(parser.CloseBlocker); ok {
		cb.CloseBlock(parent, block, pc)
	}
}

func (g *inlineGuard) SetOption(name parser.OptionName, value any) {
	if so, ok := g.inner.(parser.SetOptioner); ok {
		so.SetOption(name, value)
	}
}

// transformerGuard skips a paragraph transformer for a paragraph that holds a
// genuine tag: a link reference definition could take the tag into its title,
// and a table could cut it at a '|' in a value or drop the cell it is in.
type transformerGuard struct {
	inner parser.ParagraphTransformer
}

func (g *transformerGuard) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	st := stateOf(pc, reader.Source())
	if lines := node.Lines(); len(st.spans) != 0 && lines.Len() != 0 &&
		st.firstIn(lines.At(0).Start, lines.At(lines.Len()-1).Stop) >= 0 {
		return
	}
	g.inner.Transform(node, reader, pc)
}

func (g *transformerGuard) SetOption(name parser.OptionName, value any) {
	if so, ok := g.inner.(parser.SetOptioner); ok {
		so.SetOption(name, value)
	}
}
