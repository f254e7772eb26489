package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// pane shows a window of lines that are laid out already (wrapped to the
// width by the renderer) and scrolls it. It stands in for bubbles'
// viewport, which measures the display width of every line — grapheme by
// grapheme — on each change and each scroll question: with a 40 KB answer
// streaming that cost seconds of CPU; a pane measures only the lines it
// shows.
type pane struct {
	lines         []string
	width, height int
	y             int // the first line shown

	shown string // the last view, kept until the lines, size or position change
	fresh bool
	// cut is the lines of the last view, cut to the width, by their
	// source: a line still shown after a scroll is not measured again.
	cut, prev map[string]string
}

// setSize sets the pane's size.
func (p *pane) setSize(width, height int) {
	if width != p.width {
		clear(p.cut) // cut to another width
	}
	p.width, p.height = width, max(height, 1)
	p.clamp()
	p.fresh = false
}

// setLines replaces the lines with lines, which the pane keeps (the caller
// does not change them until it sets lines again).
func (p *pane) setLines(lines []string) {
	p.lines = lines
	p.clamp()
	p.fresh = false
}

func (p *pane) maxY() int { return max(len(p.lines)-p.height, 0) }

func (p *pane) clamp() {
	if y := min(max(p.y, 0), p.maxY()); y != p.y {
		p.y, p.fresh = y, false
	}
}

func (p *pane) atTop() bool    { return p.y == 0 }
func (p *pane) atBottom() bool { return p.y >= p.maxY() }

func (p *pane) gotoBottom() {
	if y := p.maxY(); y != p.y {
		p.y, p.fresh = y, false
	}
}

func (p *pane) scroll(n int) {
	p.y += n
	p.fresh = false
	p.clamp()
}

// show scrolls so that line is in view, a third of the way down, but
// not above the line top (the start of what it belongs to) when both fit.
func (p *pane) show(line, top int) {
	y := line - p.height/3
	if line-top < p.height {
		y = max(y, top)
	}
	p.y, p.fresh = y, false
	p.clamp()
}

func (p *pane) pageUp()   { p.scroll(-max(p.height-1, 1)) }
func (p *pane) pageDown() { p.scroll(max(p.height-1, 1)) }

// lineCount is the number of lines.
func (p *pane) lineCount() int { return len(p.lines) }

// view renders the lines shown, each cut to the width, padded to the
// height.
// The program asks for the view after every message (each streamed
// event); it is made again only when something it shows changed.
func (p *pane) view() string {
	if p.fresh {
		return p.shown
	}
	out := make([]string, p.height)
	p.prev, p.cut = p.cut, p.prev
	clear(p.cut)
	if p.cut == nil {
		p.cut = map[string]string{}
	}
	for i := range out {
		if k := p.y + i; k < len(p.lines) {
			line := p.lines[k]
			cut, ok := p.prev[line]
			if !ok {
				cut = ansi.Truncate(line, p.width, "…")
			}
			out[i], p.cut[line] = cut, cut
		}
	}
	p.shown, p.fresh = strings.Join(out, "\n"), true
	return p.shown
}
