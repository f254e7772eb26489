package markdown

import (
	"bytes"
	"regexp"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/toolmark/toolmark/toolcallmarkup"
)

// LaTeX passes through untouched: $…$ (and $$…$$ inside a paragraph)
// becomes <span class="math">, a block that starts with a $$ line becomes
// <div class="math">, each holding the source as escaped text:
//
//	$$\int_0^1 x\,dx$$   →   <div class="math">\int_0^1 x\,dx</div>
//
// No markdown rule applies inside (a backslash stays a backslash, _ and *
// stay characters); a page typesets the text (KaTeX) or shows it as it is.
// An opening $ must be followed by a non-space and a closing $ preceded by
// one and not followed by a digit, so "$5 and $10" stays text. A genuine
// ToolCall tag is never taken into math.

// KindMath is the node kind of inline math, KindMathBlock of display math.
var (
	KindMath      = ast.NewNodeKind("Math")
	KindMathBlock = ast.NewNodeKind("MathBlock")
)

// Math is an inline span of LaTeX source.
type Math struct {
	ast.BaseInline
	Source []byte
}

// Kind implements ast.Node.
func (n *Math) Kind() ast.NodeKind { return KindMath }

// Dump implements ast.Node.
func (n *Math) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"Source": string(n.Source)}, nil)
}

// MathBlock is a block of LaTeX source: its lines.
type MathBlock struct {
	ast.BaseBlock
	closed bool // its closing $$ was read
}

// Kind implements ast.Node.
func (n *MathBlock) Kind() ast.NodeKind { return KindMathBlock }

// IsRaw implements ast.Node: the block's lines are its content.
func (n *MathBlock) IsRaw() bool { return true }

// Dump implements ast.Node.
func (n *MathBlock) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

const (
	mathInlinePriority = 280 // below the autolink (300) and raw-HTML (400) parsers, beside the ToolCall one
	mathBlockPriority  = 950 // below the HTML block parser (900), above paragraphs
	mathRenderPriority = 600
)

// hasTag reports whether b holds the start of a genuine ToolCall tag.
func hasTag(b []byte) bool { return bytes.Contains(b, []byte("<ToolCall")) }

type mathInlineParser struct{}

func (mathInlineParser) Trigger() []byte { return []byte{'$'} }

func (mathInlineParser) Parse(_ ast.Node, block text.Reader, _ parser.Context) ast.Node {
	line, _ := block.PeekLine()
	delim := 1
	if len(line) > 1 && line[1] == '$' {
		delim = 2
	}
	body := line[delim:]
	if len(body) == 0 || body[0] == ' ' || body[0] == '\t' || body[0] == '\n' {
		return nil
	}
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '\\':
			i++ // an escaped character, $ included, is part of the source
			continue
		case '$':
		default:
			continue
		}
		if delim == 2 && (i+1 >= len(body) || body[i+1] != '$') {
			continue
		}
		end := i + delim
		if i == 0 || body[i-1] == ' ' || body[i-1] == '\t' || (delim == 1 && end < len(body) && body[end] >= '0' && body[end] <= '9') {
			continue
		}
		src := body[:i]
		if hasTag(src) {
			return nil
		}
		block.Advance(delim + end)
		return &Math{Source: append([]byte(nil), src...)}
	}
	return nil
}

type mathBlockParser struct{}

func (mathBlockParser) Trigger() []byte { return []byte{'$'} }

// mathCloses reports whether a line of a block ends the block: whether
// it ends with $$ (after the opening $$ on the first line).
func mathCloses(line []byte) bool {
	return bytes.HasSuffix(bytes.TrimRight(line, " \t\r\n"), []byte("$$"))
}

func (mathBlockParser) Open(_ ast.Node, reader text.Reader, _ parser.Context) (ast.Node, parser.State) {
	line, seg := reader.PeekLine()
	pos := 0
	for pos < len(line) && pos < 3 && line[pos] == ' ' {
		pos++
	}
	if !bytes.HasPrefix(line[pos:], []byte("$$")) || hasTag(line) {
		return nil, parser.NoChildren
	}
	rest := bytes.TrimRight(line[pos+2:], " \t\r\n")
	node := &MathBlock{}
	start := seg.Start + pos + 2
	if len(rest) >= 2 && bytes.HasSuffix(rest, []byte("$$")) {
		// $$…$$ on one line: a whole block only when nothing follows it.
		node.Lines().Append(text.NewSegment(start, start+len(rest)-2))
		node.closed = true
		reader.AdvanceToEOL()
		return node, parser.Close
	}
	if bytes.Contains(rest, []byte("$$")) {
		return nil, parser.NoChildren // $$…$$ with text after it: inline math in a paragraph
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		node.Lines().Append(text.NewSegment(start, seg.Stop))
	}
	reader.AdvanceToEOL()
	return node, parser.NoChildren
}

func (mathBlockParser) Continue(node ast.Node, reader text.Reader, _ parser.Context) parser.State {
	line, seg := reader.PeekLine()
	if line == nil || node.(*MathBlock).closed || hasTag(line) {
		return parser.Close
	}
	if mathCloses(line) {
		trimmed := bytes.TrimRight(line, " \t\r\n")
		if body := trimmed[:len(trimmed)-2]; len(bytes.TrimSpace(body)) > 0 {
			node.Lines().Append(text.NewSegment(seg.Start, seg.Start+len(body)))
		}
		reader.AdvanceToEOL()
		return parser.Close
	}
	node.Lines().Append(seg)
	reader.AdvanceToEOL()
	return parser.Continue | parser.NoChildren
}

func (mathBlockParser) Close(ast.Node, text.Reader, parser.Context) {}
func (mathBlockParser) CanInterruptParagraph() bool                 { return false }
func (mathBlockParser) CanAcceptIndentedLine() bool                 { return false }

type mathRenderer struct{}

func (mathRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(KindMath, func(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			writeMath(w, "span", n.(*Math).Source)
		}
		return ast.WalkSkipChildren, nil
	})
	reg.Register(KindMathBlock, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			var b bytes.Buffer
			lines := n.Lines()
			for i := 0; i < lines.Len(); i++ {
				seg := lines.At(i)
				b.Write(seg.Value(source))
			}
			writeMath(w, "div", bytes.TrimSpace(b.Bytes()))
			_ = w.WriteByte('\n')
		}
		return ast.WalkSkipChildren, nil
	})
}

// writeMath writes the source as escaped text in <tag class="math">, the
// neutralisation of ToolCall tags undone as in code.
func writeMath(w util.BufWriter, tag string, src []byte) {
	_, _ = w.WriteString("<" + tag + ` class="math">`)
	_, _ = w.Write(util.EscapeHTML([]byte(toolcallmarkup.RestoreText(string(src)))))
	_, _ = w.WriteString("</" + tag + ">")
}

type mathExtension struct{}

// MathPassThrough is the goldmark extension that keeps $…$ and $$…$$ as
// LaTeX source for a page to typeset.
var MathPassThrough goldmark.Extender = mathExtension{}

func (mathExtension) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(
		parser.WithInlineParsers(util.Prioritized(mathInlineParser{}, mathInlinePriority)),
		parser.WithBlockParsers(util.Prioritized(mathBlockParser{}, mathBlockPriority)),
	)
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(mathRenderer{}, mathRenderPriority)))
}

// allowMathAndTaskLists lets the HTML policy keep class="math" on span and div, and
// the disabled checkboxes of task lists.
func allowMathAndTaskLists(p *bluemonday.Policy) {
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^math$`)).OnElements("span", "div")
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").Matching(regexp.MustCompile(`^$`)).OnElements("input")
}
