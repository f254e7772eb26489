package markdown

import (
	"strings"

	"github.com/toolmark/toolmark/toolcallmarkup"
)

// HoldBack returns the part of a streaming answer's markdown src to show
// now: all of it, but for an emphasis (** or __) or a code span (`)
// opened on its last, unfinished line and not closed yet, which it leaves
// out until the marker closes or the line ends — so a reader never sees
// raw markers flash and then turn into formatting. Text inside a fenced
// code block is shown as it comes. The page's live view and the terminal
// client both hold back by this rule; a finished answer is shown whole.
func HoldBack(src string) string {
	i := strings.LastIndexByte(src, '\n') + 1
	if insideFence(src[:i]) {
		return src
	}
	if cut := unclosed(src[i:]); cut >= 0 {
		return src[:i+cut]
	}
	return src
}

// insideFence reports whether the complete lines src end inside a fenced
// code block. As in the renderer (see guard.go), a line holding a genuine
// tag ends an open fence and opens none.
func insideFence(src string) bool {
	tags := scanState{spans: toolcallmarkup.Scan(src)}
	var fence string // the open fence's marker, "" outside one
	pos := 0
	for line := range strings.Lines(src) {
		start := pos
		pos += len(line)
		if tags.firstIn(start, pos) >= 0 {
			fence = ""
			continue
		}
		t := strings.TrimLeft(line, " ")
		if len(line)-len(t) > 3 {
			continue // indented code, not a fence
		}
		t = strings.TrimRight(t, "\r\n")
		switch {
		case fence == "" && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")):
			fence = t[:runLen(t, t[0])]
		case fence != "" && strings.HasPrefix(t, fence[:1]) && runLen(t, fence[0]) >= len(fence) && strings.TrimSpace(t[runLen(t, fence[0]):]) == "":
			fence = ""
		}
	}
	return fence != ""
}

// unclosed returns the offset in line of the first emphasis or code-span
// marker not closed on it, or -1.
func unclosed(line string) int {
	open := -1 // an emphasis marker open since
	var mark byte
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == '\\':
			i += 2
			continue
		case c == '`':
			n := runLen(line[i:], '`')
			end := closingRun(line[i+n:], n)
			if end < 0 {
				if open >= 0 {
					return open
				}
				return i
			}
			i += n + end + n
			continue
		case (c == '*' || c == '_') && i+1 < len(line) && line[i+1] == c:
			switch {
			case open < 0:
				open, mark = i, c
			case mark == c:
				open = -1
			}
			i += runLen(line[i:], c)
			continue
		}
		i++
	}
	return open
}

// closingRun returns the offset in s of a run of exactly n backticks, or -1.
func closingRun(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		k := runLen(s[i:], '`')
		if k == n {
			return i
		}
		i += k
	}
	return -1
}

// runLen returns how many times c repeats at the start of s.
func runLen(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}
