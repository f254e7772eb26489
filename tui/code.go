package tui

import (
	"slices"
	"strings"
)

// An open code block streams plain (plainOpenFence), and glamour renders
// each of its plain lines the same way: a prefix, the text, a suffix and
// padding to the block's width. codeStyle is that pattern, learnt once from
// glamour's own rendering of a probe and checked against it, so a draw
// writes the new lines of an open code block itself instead of running
// glamour over them. A line it cannot vouch for — not printable ASCII, or
// as wide as the block, where glamour wraps — is left to glamour.
type codeStyle struct {
	head        string // the fence line it was learnt with ("```text\n")
	top, bottom string // the block's first (padding) and last lines
	first, next string // the prefix of the first code line and of the others
	suffix, pad string // what follows the text, and one column of padding
	cols        int    // the columns of text and padding on a line
}

// codePiece renders rest, lines of an open plain code block after its
// fence line head, as glamour renders head+rest; false when the pattern
// does not hold for one of them.
func (r *renderer) codePiece(head, rest string) ([]string, bool) {
	if head == "" {
		return nil, false
	}
	return r.codeStyleFor(head).render(strings.Split(strings.TrimSuffix(rest, "\n"), "\n"))
}

// line renders one line of code; false when the pattern does not vouch
// for it.
func (cs *codeStyle) line(text string, first bool) (string, bool) {
	if len(text) >= cs.cols {
		return "", false
	}
	for i := 0; i < len(text); i++ {
		if text[i] < 0x20 || text[i] > 0x7e {
			return "", false
		}
	}
	prefix := cs.next
	if first {
		prefix = cs.first
	}
	return prefix + text + cs.suffix + strings.Repeat(cs.pad, cs.cols-len(text)), true
}

// codeStyleFor returns the pattern of code lines after the fence line
// head, learnt on first use; one that vouches for no line when glamour's
// rendering does not follow it (the notty style).
func (r *renderer) codeStyleFor(head string) *codeStyle {
	if r.code != nil && r.code.head == head {
		return r.code
	}
	r.code = learnCode(r, head)
	if r.code == nil {
		r.code = &codeStyle{head: head} // no line passes: glamour renders every piece
	}
	return r.code
}

// learnCode learns the pattern from a probe and checks it against
// glamour's rendering of lines of every kind the pattern admits.
func learnCode(r *renderer, head string) *codeStyle {
	probe := strings.Split(r.render(head+"Q\nQQ\n"), "\n")
	if len(probe) != 4 {
		return nil
	}
	cs := &codeStyle{head: head, top: probe[0], bottom: probe[3]}
	var after1, after2 string
	cs.first, after1, _ = strings.Cut(probe[1], "Q")
	cs.next, after2, _ = strings.Cut(probe[2], "QQ")
	if !strings.HasPrefix(after1, after2) || len(after1) == len(after2) {
		return nil
	}
	cs.pad = after1[len(after2):]
	cs.suffix, cs.cols = after1, 1
	for strings.HasSuffix(cs.suffix, cs.pad) {
		cs.suffix = strings.TrimSuffix(cs.suffix, cs.pad)
		cs.cols++
	}
	// The check: lines empty, blank, short and one short of the width.
	check := []string{"", " ", "x := 1", "  \"q\" {b} [c] `t` <a>", "~!@#$%^&*()_+=-|\\;:',./?  ", strings.Repeat("w", cs.cols-1), "end"}
	check = slices.DeleteFunc(check, func(l string) bool { return len(l) >= cs.cols })
	want := strings.Split(r.render(head+strings.Join(check, "\n")+"\n"), "\n")
	got, ok := cs.render(check)
	if !ok || strings.Join(got, "\n") != strings.Join(want, "\n") {
		return nil
	}
	return cs
}

// render renders lines as a piece of a block.
func (cs *codeStyle) render(lines []string) ([]string, bool) {
	out := []string{cs.top}
	for i, l := range lines {
		s, ok := cs.line(l, i == 0)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return append(out, cs.bottom), true
}
