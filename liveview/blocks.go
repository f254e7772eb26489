package liveview

import (
	"strings"

	"github.com/toolmark/toolmark/markdown"
	"github.com/toolmark/toolmark/toolcallmarkup"
	"github.com/yuin/goldmark/parser"
)

// rerender renders finished block i again.
func (l *View) rerender(i int) {
	html, err := l.renderAlone(l.blocks[i].src)
	if err != nil {
		l.err = err
		return
	}
	if html != l.blocks[i].html {
		l.blocks[i].html = html
		l.changed[i] = l.version
	}
}

// renderAlone renders the source of finished blocks with every reference
// definition of the message.
func (l *View) renderAlone(src string) (string, error) {
	blocks, _, err := l.r.RenderBlocks([]byte(src), l.allRefs())
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, tb := range blocks {
		b.WriteString(tb.HTML)
	}
	return b.String(), nil
}

// rebuild starts again from the state's content: one trailing block.
func (l *View) rebuild() {
	content := l.state.Content()
	l.blocks, l.tail, l.tailLen, l.size = nil, nil, 0, 0
	l.rootAt, l.elems = map[string]int{}, map[string]string{}
	l.refs, l.tailRef, l.refSig = nil, nil, ""
	pos := 0
	for _, sp := range toolcallmarkup.Scan(content) {
		if sp.Parent >= 0 {
			continue
		}
		if sp.Start > pos {
			l.tail = append(l.tail, tailItem{text: content[pos:sp.Start]})
		}
		l.tail = append(l.tail, tailItem{id: sp.Call.ID, text: content[sp.Start:sp.End]})
		pos = sp.End
	}
	if pos < len(content) {
		l.tail = append(l.tail, tailItem{text: content[pos:]})
	}
	l.tailLen = len(content)
	l.tailDirt = true
	l.version++
	l.resetAt = l.version
	l.changed = []int64{l.version}
}

// render renders the trailing block if it changed, and moves the blocks
// at its start that are finished into the finished blocks.
func (l *View) render() {
	if !l.tailDirt {
		return
	}
	l.tailDirt = false
	var sb strings.Builder
	sb.Grow(l.tailLen)
	for _, it := range l.tail {
		sb.WriteString(it.text)
	}
	src := l.heldBack(sb.String())
	renderBlocks := l.r.RenderLiveBlocks // a long code block still open is not highlighted at every frame
	if l.state.Status().Final() {
		renderBlocks = l.r.RenderBlocks
	}
	blocks, refs, err := renderBlocks([]byte(src), l.finishedRefs())
	if err != nil {
		l.err = err
		return
	}
	// The finished blocks: up to the last cut that is safe.
	cuts := []int{0}
	for k := 1; k < len(blocks); k++ {
		if l.safeCut(src, blocks, k) {
			cuts = append(cuts, k)
		}
	}
	last := cuts[len(cuts)-1]
	newRefs := refsOf(refs, l.refs)
	if last > 0 {
		cut := blocks[last].Start
		if len(newRefs) > 0 {
			// Which definitions do the finished blocks make, which the
			// trailing block?
			_, done, err := l.r.RenderBlocks([]byte(src[:cut]), l.finishedRefs())
			if err != nil {
				l.err = err
				return
			}
			for k, ref := range refsOf(done, l.refs) {
				if l.refs == nil {
					l.refs = map[string]parser.Reference{}
				}
				l.refs[k] = ref
			}
			_, rest, err := l.r.RenderBlocks([]byte(src[cut:]), l.finishedRefs())
			if err != nil {
				l.err = err
				return
			}
			newRefs = refsOf(rest, l.refs)
		}
		for c := 0; c+1 < len(cuts); c++ {
			from, to := blocks[cuts[c]].Start, blocks[cuts[c+1]].Start
			var html strings.Builder
			for _, tb := range blocks[cuts[c]:cuts[c+1]] {
				html.WriteString(tb.HTML)
			}
			l.finish(src[from:to], html.String())
		}
		l.dropTail(cut, len(cuts)-1)
		blocks = blocks[last:]
	}
	l.tailRef = newRefs
	var html strings.Builder
	for _, tb := range blocks {
		html.WriteString(tb.HTML)
	}
	t := len(l.blocks)
	for len(l.changed) < t+1 {
		l.changed = append(l.changed, l.version)
	}
	if h := html.String(); h != l.tailHTML || l.changed[t] == 0 {
		l.tailHTML = h
		l.changed[t] = l.version
	}
	if sig := refSignature(l.allRefs()); sig != l.refSig {
		l.refSig = sig
		for i := range l.blocks {
			l.rerender(i)
		}
	}
}

// heldBack is the tail to render now: while the turn runs, an emphasis or
// code span opened in the last text and not closed yet is left out until
// it closes or its line ends (markdown.HoldBack), so no raw marker
// flashes; a finished turn shows everything.
func (l *View) heldBack(src string) string {
	n := len(l.tail)
	if l.state.Status().Final() || n == 0 || l.tail[n-1].id != "" {
		return src
	}
	held := markdown.HoldBack(src)
	if len(held) < len(src)-len(l.tail[n-1].text) {
		return src // the cut would fall in an element before the last text
	}
	return held
}

// safeCut reports whether the source may be cut before blocks[k]: what
// comes before it renders the same whatever follows.
func (l *View) safeCut(src string, blocks []markdown.TopBlock, k int) bool {
	b := blocks[k]
	if b.Start <= 0 || !strings.Contains(src[b.Start:], "\n") {
		return false // unknown position, or a line still being written
	}
	if !b.BlankBefore && (!blocks[k-1].Closed || opensContainer(src[b.Start:])) {
		// A list (or a quote holding one) right after a closed block
		// renders tight or loose by that line (goldmark, with a link
		// reference definition opening an item): alone it would render
		// as after a blank line.
		return false
	}
	// No top-level element may straddle the cut.
	pos := 0
	for _, it := range l.tail {
		end := pos + len(it.text)
		if it.id != "" && pos < b.Start && b.Start < end {
			return false
		}
		if end >= b.Start {
			break
		}
		pos = end
	}
	return true
}

// opensContainer reports whether src's first line opens a list item or a
// block quote: a list marker or '>' after at most three spaces.
func opensContainer(src string) bool {
	line, _, _ := strings.Cut(src, "\n")
	for i := 0; i < 3 && strings.HasPrefix(line, " "); i++ {
		line = line[1:]
	}
	if line == "" {
		return false
	}
	if line[0] == '>' {
		return true
	}
	rest := ""
	switch c := line[0]; {
	case c == '-' || c == '+' || c == '*':
		rest = line[1:]
	case c >= '0' && c <= '9':
		n := 1
		for n < len(line) && n < 10 && line[n] >= '0' && line[n] <= '9' {
			n++
		}
		if n == len(line) || n > 9 || (line[n] != '.' && line[n] != ')') {
			return false
		}
		rest = line[n+1:]
	default:
		return false
	}
	return rest == "" || rest[0] == ' ' || rest[0] == '\t'
}

// finish appends a finished block.
func (l *View) finish(src, html string) {
	i := len(l.blocks)
	l.blocks = append(l.blocks, liveBlock{src: src, html: html})
	l.size += len(src)
	// The trailing block moves one place on: this block takes its index.
	for len(l.changed) < i+2 {
		l.changed = append(l.changed, 0)
	}
	l.changed[i] = l.version
	l.changed[i+1] = l.version
	l.tailHTML = ""
}

// dropTail removes the first n bytes of the tail, which now make the last
// count finished blocks, and records where their top-level elements went.
func (l *View) dropTail(n, count int) {
	first := len(l.blocks) - count
	ends := make([]int, count) // end offset of each new block in the old tail
	e := 0
	for j := range count {
		e += len(l.blocks[first+j].src)
		ends[j] = e
	}
	pos := 0
	var rest []tailItem
	for _, it := range l.tail {
		end := pos + len(it.text)
		switch {
		case end <= n:
			if it.id != "" {
				bi := first + count - 1
				for j, e := range ends {
					if pos < e {
						bi = first + j
						break
					}
				}
				l.rootAt[it.id] = bi
				l.elems[it.id] = it.text
			}
		case pos >= n:
			rest = append(rest, it)
		default: // a text run cut in two (a cut never falls in an element)
			rest = append(rest, tailItem{text: it.text[n-pos:]})
		}
		pos = end
	}
	l.tail = rest
	l.tailLen -= n
}
