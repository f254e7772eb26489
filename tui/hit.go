package tui

import (
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
)

// A search hit opened (/search, then Enter): the conversation is read
// with as many earlier pages as it takes to hold the message the hit is
// in, as the page does, and shown with that turn in view and the first
// occurrence of the text searched for marked (reverse video, as in the
// search's snippets).

// hitAt is the message a search hit is in and the text searched for.
type hitAt struct {
	msgID, query string
}

// maxHitPages bounds the earlier pages read to reach a hit.
const maxHitPages = 40

// openHit opens conversation convID at its message h.msgID.
func (m *model) openHit(convID string, h hitAt) tea.Cmd {
	c, ctx := m.c, m.ctx
	return func() tea.Msg {
		page, err := c.GetConversation(ctx, convID)
		for i := 0; err == nil && holding(page.Messages, h.msgID) < 0 && page.More && i < maxHitPages; i++ {
			var older client.ConversationPage
			if older, err = c.GetConversationBefore(ctx, convID, page.Before, 0); err == nil {
				page.Messages = append(older.Messages, page.Messages...)
				page.More, page.Before = older.More, older.Before
			}
		}
		return historyMsg{convID: convID, conv: page, err: err, hit: &h}
	}
}

// holding returns the index of message id in msgs, or -1.
func holding(msgs []client.Message, id string) int {
	for i, msg := range msgs {
		if msg.ID == id {
			return i
		}
	}
	return -1
}

// shownHit is the search hit shown in the open conversation: its turn
// and the text searched for. Its mark is set again each time the turn is
// rendered anew (a resize, another style, earlier messages loaded), until
// another conversation opens or a message is sent (clearHit).
type shownHit struct {
	e      *entry
	query  string
	answer bool // the hit is in the answer: the question's lines are not searched
	at     int  // the line of the turn's rendering the mark is on
	top    int  // the transcript's line the turn starts on, -1 when not in it (set by transcript)
}

// showHit puts the turn of msgs (the history just shown) that holds the
// hit in view, its first match marked; false when the hit is not there.
func (c *chat) showHit(msgs []client.Message, h hitAt) bool {
	i := holding(msgs, h.msgID)
	if i < 0 || c.expanded {
		return false
	}
	k := len(entriesOf(msgs[:i+1])) - 1 // the turn the message is in, as the history pairs them
	if k < 0 || k >= len(c.history) {
		return false
	}
	e := c.history[k]
	c.clearHit()
	c.hit = &shownHit{e: e, query: h.query, answer: msgs[i].Role != toolmark.RoleUser && e.user != ""}
	e.rendered[0] = nil // rendered anew, and marked (transcript)
	c.lines = c.transcript(c.lines[:0])
	c.vp.setLines(c.lines)
	c.showHitLine()
	return true
}

// hitLine returns the transcript's line the hit's mark is on and its
// turn's first line; false when no hit is shown in the live view.
func (c *chat) hitLine() (line, top int, ok bool) {
	if c.hit == nil || c.expanded || c.hit.top < 0 {
		return 0, 0, false
	}
	return c.hit.top + c.hit.at, c.hit.top, true
}

// hitInView reports whether the hit's mark is on the screen.
func (c *chat) hitInView() bool {
	line, _, ok := c.hitLine()
	return ok && line >= c.vp.y && line < c.vp.y+c.vp.height
}

// showHitLine scrolls the hit's mark into view.
func (c *chat) showHitLine() {
	if line, top, ok := c.hitLine(); ok {
		c.vp.show(line, top)
	}
}

// marked returns the lines of the hit's turn, just rendered, with the
// hit's first match marked: a copy, as the lines are shared with the
// renderer's cache.
func (c *chat) marked(lines []string) []string {
	h := c.hit
	from := 0
	if h.answer {
		// The hit is in the answer: its lines come after the question's.
		from = len(c.entryView(nil, &entry{user: h.e.user, msgID: h.e.msgID, versions: h.e.versions}, false))
	}
	h.at = from
	for j := from; j < len(lines); j++ {
		if line, ok := markFirst(lines[j], h.query); ok {
			lines = slices.Clone(lines)
			lines[j], h.at = line, j
			break
		}
	}
	return lines
}

// clearHit takes the mark of the hit shown off its turn.
func (c *chat) clearHit() {
	if c.hit != nil {
		c.hit.e.rendered[0] = nil
		c.hit = nil
	}
}

// markFirst sets the first occurrence of q (any case) in a rendered line
// in reverse video; the line's own styles stay as they were.
func markFirst(line, q string) (string, bool) {
	q = strings.ToLower(strings.TrimSpace(q))
	if q == "" {
		return line, false
	}
	// The visible text, and where each of its bytes is in the line.
	var vis strings.Builder
	var pos []int
	for i := 0; i < len(line); {
		if n := escapeLen(line[i:]); n > 0 {
			i += n
			continue
		}
		vis.WriteByte(line[i])
		pos = append(pos, i)
		i++
	}
	text := vis.String()
	if text != ansi.Strip(line) {
		// A sequence the terminal reads otherwise than escapeLen (a
		// malformed one; the renderer writes none): better unmarked than
		// shown changed.
		return line, false
	}
	low := strings.ToLower(text)
	j := strings.Index(low, q)
	if j < 0 || len(low) != len(text) {
		return line, false
	}
	start, end := pos[j], pos[j+len(q)-1]+1
	// The escapes inside the match come after it, so what follows keeps
	// its style.
	var inner strings.Builder
	for i := start; i < end; {
		if n := escapeLen(line[i:]); n > 0 {
			inner.WriteString(line[i : i+n])
			i += n
			continue
		}
		i++
	}
	out := line[:start] + "\x1b[7m" + text[j:j+len(q)] + "\x1b[27m" + inner.String() + line[end:]
	if ansi.Strip(out) != text {
		return line, false
	}
	return out, true
}

// escapeLen returns the length of the escape sequence s starts with (CSI,
// or a string sequence: OSC, DCS, SOS, PM, APC), or 0.
func escapeLen(s string) int {
	if len(s) < 2 || s[0] != '\x1b' {
		return 0
	}
	switch s[1] {
	case '[':
		for i := 2; i < len(s); i++ {
			if s[i] >= 0x40 && s[i] <= 0x7e {
				return i + 1
			}
		}
	case ']', 'P', 'X', '^', '_':
		for i := 2; i < len(s); i++ {
			if s[i] == '\a' {
				return i + 1
			}
			if s[i] == '\x1b' && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
	default:
		return 2
	}
	return len(s)
}
