package tui

import (
	"strings"
	"unicode"

	"github.com/charmbracelet/x/ansi"
)

// A streaming answer's trailing block can be long — a paragraph of 40 KB on
// one line, a code block still open — and it grows at every draw. Rendered
// whole each time, it cost the square of its length. So its rendering is
// kept line by line: the lines that no more text can change are frozen with
// the source they render, and a draw renders only what follows them.
//
//   - A paragraph is wrapped greedily: a line, once another follows it,
//     never changes, and the rest wraps from the start of its last line as
//     it would within the whole. Its complete lines are frozen once the
//     source of its last line is found as it stands at the source's end
//     (plain text, no markup open before it).
//   - A code block's lines render one by one: its complete source lines are
//     frozen, rendered between the block's padding lines, which are dropped
//     where the pieces meet. Only code shown plain (plainOpenFence) is
//     cut: a highlighter's state runs across lines.
//
// Anything else is rendered whole, as before.

// freezeLines is how many rendered lines a trailing block's unfrozen part
// grows to before they are frozen: each freeze renders them once more.
const freezeLines = 4

// liveLines is the frozen part of the trailing block.
type liveLines struct {
	src   string   // the source its lines render (a prefix of the block)
	head  string   // a code block's fence line, rendered in front of each piece
	lines []string // the rendered lines of src, to be continued
}

// liveBlock renders the trailing block of a streaming answer as lines. It
// keeps its last rendering only, not in the cache: the block grows at
// every draw, and each of its versions would stay there.
func (r *renderer) liveBlock(text string) []string {
	if text != r.live.src {
		t := plainOpenFence(strings.TrimLeft(text, "\n")) // the blank lines before it render as nothing
		r.live.src, r.live.lines = text, r.incremental(t)
		if len(r.live.lines) == 1 && r.live.lines[0] == "" {
			r.live.lines = nil // nothing to show
		}
	}
	return r.live.lines[:len(r.live.lines):len(r.live.lines)]
}

// incremental renders t, the trailing block, from its frozen lines on.
func (r *renderer) incremental(t string) []string {
	f := &r.frozen
	kind := blockKind(t)
	if kind == "" || !strings.HasPrefix(t, f.src) || f.head != "" && !strings.HasPrefix(t, f.head) {
		*f = liveLines{}
		if kind == "" {
			return splitRendered(r.render(t))
		}
	}
	if kind == "code" && f.src == "" {
		f.head = t[:strings.IndexByte(t, '\n')+1]
		f.src = f.head
	}
	rest := t[len(f.src):]
	lines := r.piece(f.head, rest)
	if len(lines) > freezeLines {
		r.freeze(kind, rest, lines)
		lines = r.piece(f.head, t[len(f.src):])
	}
	return append(f.lines[:len(f.lines):len(f.lines)], lines...)
}

// splitRendered cuts a rendering into its lines (none for nothing).
func splitRendered(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// piece renders rest, the source after the frozen lines, as lines that
// continue them: a code piece between its block's fences, less the padding
// line at its top when lines come before it.
func (r *renderer) piece(head, rest string) []string {
	if rest == "" {
		return nil
	}
	out, ok := r.codePiece(head, rest)
	if !ok {
		out = strings.Split(r.render(head+rest), "\n")
	}
	if head != "" && len(r.frozen.lines) > 0 && len(out) > 0 {
		out = out[1:]
	}
	return out
}

// freeze moves what no more text can change of rest, rendered as lines,
// into the frozen part.
func (r *renderer) freeze(kind, rest string, lines []string) {
	f := &r.frozen
	switch kind {
	case "paragraph":
		last := strings.TrimSpace(ansi.Strip(lines[len(lines)-1]))
		body := strings.TrimRight(rest, " ")
		cut := len(body) - len(last)
		if last == "" || !strings.HasSuffix(body, last) || cut <= 0 || body[cut-1] != ' ' || !plain(rest[:cut]) {
			return // the last line is not found as it stands: render whole
		}
		f.src += rest[:cut]
		f.lines = append(f.lines, lines[:len(lines)-1]...)
	case "code":
		// The last line stays unfrozen, complete or not: the piece after
		// the frozen lines is never empty, and brings the block's end.
		nl := strings.LastIndexByte(strings.TrimSuffix(rest, "\n"), '\n')
		if nl < 0 {
			return
		}
		done := r.piece(f.head, rest[:nl+1])
		if len(done) < 2 {
			return
		}
		f.src += rest[:nl+1]
		f.lines = append(f.lines, done[:len(done)-1]...) // less the block's closing line
	}
}

// blockKind tells which trailing blocks render line by line: "paragraph"
// for a paragraph on one line that starts with a letter, "code" for a
// fenced code block left open and shown plain, "" for any other.
func blockKind(t string) string {
	first, _, multi := strings.Cut(t, "\n")
	switch {
	case strings.HasPrefix(first, "```text") || strings.HasPrefix(first, "~~~text"):
		if !closesFence(t, first[:3]) {
			return "code"
		}
	case !multi && first != "":
		if c := []rune(first)[0]; unicode.IsLetter(c) {
			return "paragraph"
		}
	}
	return ""
}

// closesFence reports whether a line after the first of t closes its fence.
func closesFence(t, fence string) bool {
	_, body, _ := strings.Cut(t, "\n")
	for line := range strings.Lines(body) {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, fence) && strings.Trim(l, fence[:1]) == "" {
			return true
		}
	}
	return false
}

// plain reports whether s leaves no inline markup open: its code spans,
// emphasis and link brackets all closed.
func plain(s string) bool {
	return strings.Count(s, "`")%2 == 0 && strings.Count(s, "*")%2 == 0 && strings.Count(s, "_")%2 == 0 &&
		strings.Count(s, "[") == strings.Count(s, "]") && !strings.ContainsAny(s, "<\\")
}
