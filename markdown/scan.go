package markdown

import (
	"sort"

	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"

	"github.com/toolmark/toolmark/toolcallmarkup"
)

// scanKey holds the *scanState of the document being parsed.
var scanKey = parser.NewContextKey()

// scanState is toolcallmarkup.Scan's view of the whole source, computed once
// per document: every parser of this package and every guard asks it where
// the genuine elements are.
type scanState struct {
	spans  []toolcallmarkup.Span
	closes map[int]struct{} // CloseStart offsets, built on first use
	cursor int              // last answer of next: inline parsing mostly moves forward
}

// stateOf returns the scan of source, computing it on first use in pc.
func stateOf(pc parser.Context, source []byte) *scanState {
	if v, ok := pc.Get(scanKey).(*scanState); ok {
		return v
	}
	st := &scanState{spans: toolcallmarkup.Scan(string(source))}
	pc.Set(scanKey, st)
	return st
}

// next returns the index of the first span starting at or after off, or
// len(spans).
func (st *scanState) next(off int) int {
	c := st.cursor
	if c > len(st.spans) || (c > 0 && st.spans[c-1].Start >= off) {
		c = sort.Search(len(st.spans), func(i int) bool { return st.spans[i].Start >= off })
	} else {
		for n := 0; c < len(st.spans) && st.spans[c].Start < off; c, n = c+1, n+1 {
			if n == 8 { // far ahead: search the rest
				c += sort.Search(len(st.spans)-c, func(i int) bool { return st.spans[c+i].Start >= off })
				break
			}
		}
	}
	st.cursor = c
	return c
}

// at returns the index of the span starting exactly at off, or -1.
func (st *scanState) at(off int) int {
	if i := st.next(off); i < len(st.spans) && st.spans[i].Start == off {
		return i
	}
	return -1
}

// isClose reports whether off is the start of a genuine closing tag.
func (st *scanState) isClose(off int) bool {
	if st.closes == nil {
		st.closes = make(map[int]struct{}, len(st.spans))
		for _, s := range st.spans {
			if s.End > s.CloseStart {
				st.closes[s.CloseStart] = struct{}{}
			}
		}
	}
	_, ok := st.closes[off]
	return ok
}

// firstIn returns the first genuine span start in [start, stop), or -1.
func (st *scanState) firstIn(start, stop int) int {
	if i := st.next(start); i < len(st.spans) && st.spans[i].Start < stop {
		return st.spans[i].Start
	}
	return -1
}

// hasTagIn reports whether a genuine element starts in seg.
func (st *scanState) hasTagIn(seg text.Segment) bool {
	return len(st.spans) != 0 && st.firstIn(seg.Start, seg.Stop) >= 0
}

// build returns the node for span i. When whole is false only the opening tag
// is used: the element's body is not on the same line, so its children are
// rendered where they stand.
func (st *scanState) build(i int, inline, whole bool) *Node {
	sp := st.spans[i]
	n := NewNode(sp.Call, inline)
	if !whole {
		return n
	}
	for j := i + 1; j < len(st.spans) && st.spans[j].Start < sp.CloseStart; j++ {
		if st.spans[j].Parent == i {
			n.AppendChild(n, st.build(j, inline, true))
		}
	}
	return n
}

// lineStop returns the end of the line segment seg without its line break.
func lineStop(source []byte, seg text.Segment) int {
	stop := seg.Stop
	for stop > seg.Start && (source[stop-1] == '\n' || source[stop-1] == '\r') {
		stop--
	}
	return stop
}

// isBlankBytes reports whether b holds only spaces, tabs and line breaks.
func isBlankBytes(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}
