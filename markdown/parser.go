package markdown

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

const closeTag = "</ToolCall>"

type toolCallBlockParser struct{}

var defaultToolCallBlockParser = &toolCallBlockParser{}

// NewToolCallBlockParser returns a parser.BlockParser that turns a line holding
// nothing but a genuine ToolCall element (with its nested children) into a
// block *Node. It accepts indented lines and interrupts paragraphs: a genuine
// tag on its own line is always a widget, whatever model text came before it.
func NewToolCallBlockParser() parser.BlockParser {
	return defaultToolCallBlockParser
}

func (b *toolCallBlockParser) Trigger() []byte { return []byte{'<'} }

func (b *toolCallBlockParser) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	_, seg := reader.PeekLine()
	source := reader.Source()
	st := stateOf(pc, source)
	if len(st.spans) == 0 {
		return nil, parser.NoChildren
	}
	p := seg.Start
	for p < seg.Stop && (source[p] == ' ' || source[p] == '\t') {
		p++
	}
	stop := lineStop(source, seg)
	if i := st.at(p); i >= 0 {
		sp := st.spans[i]
		end, whole := sp.End, true
		if end > stop {
			end, whole = sp.OpenEnd, false
		}
		if end > stop || !isBlankBytes(source[end:stop]) {
			return nil, parser.NoChildren
		}
		reader.AdvanceToEOL()
		return st.build(i, false, whole), parser.NoChildren
	}
	// A stray genuine closing tag on its own line (an element whose body
	// spans lines): consume it silently.
	if p+len(closeTag) <= stop && string(source[p:p+len(closeTag)]) == closeTag &&
		st.isClose(p) && isBlankBytes(source[p+len(closeTag):stop]) {
		reader.AdvanceToEOL()
		return &Node{closeOnly: true}, parser.NoChildren
	}
	return nil, parser.NoChildren
}

func (b *toolCallBlockParser) Continue(node ast.Node, reader text.Reader, pc parser.Context) parser.State {
	return parser.Close
}

func (b *toolCallBlockParser) Close(node ast.Node, reader text.Reader, pc parser.Context) {}

func (b *toolCallBlockParser) CanInterruptParagraph() bool { return true }

func (b *toolCallBlockParser) CanAcceptIndentedLine() bool { return true }

type toolCallParser struct{}

var defaultToolCallParser = &toolCallParser{}

// NewToolCallParser returns a parser.InlineParser that turns a genuine ToolCall
// element inside a paragraph, list item, heading or table cell into an inline
// *Node, and consumes stray genuine closing tags.
func NewToolCallParser() parser.InlineParser {
	return defaultToolCallParser
}

func (s *toolCallParser) Trigger() []byte { return []byte{'<'} }

func (s *toolCallParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, seg := block.PeekLine()
	if len(line) == 0 || line[0] != '<' || seg.Padding != 0 {
		return nil
	}
	source := block.Source()
	st := stateOf(pc, source)
	if len(st.spans) == 0 {
		return nil
	}
	p := seg.Start
	stop := lineStop(source, seg)
	if i := st.at(p); i >= 0 {
		sp := st.spans[i]
		if sp.OpenEnd > stop {
			return nil
		}
		if sp.End <= stop {
			block.Advance(sp.End - p)
			return st.build(i, true, true)
		}
		block.Advance(sp.OpenEnd - p)
		return st.build(i, true, false)
	}
	if p+len(closeTag) <= stop && string(source[p:p+len(closeTag)]) == closeTag && st.isClose(p) {
		block.Advance(len(closeTag))
		return &Node{Inline: true, closeOnly: true}
	}
	return nil
}

type backslashParser struct{}

var defaultBackslashParser = &backslashParser{}

// A backslash of model text just before a genuine tag ("C:\" as a call
// starts) would escape the tag's "<" and show it as text; backslashParser
// makes such a backslash text of its own, so the tag stays a widget.
func (*backslashParser) Trigger() []byte { return []byte{'\\'} }

func (*backslashParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, seg := block.PeekLine()
	if len(line) < 2 || line[0] != '\\' || line[1] != '<' || seg.Padding != 0 {
		return nil
	}
	st := stateOf(pc, block.Source())
	if p := seg.Start + 1; len(st.spans) == 0 || (st.at(p) < 0 && !st.isClose(p)) {
		return nil
	}
	block.Advance(1)
	return ast.NewTextSegment(text.NewSegment(seg.Start, seg.Start+1))
}
