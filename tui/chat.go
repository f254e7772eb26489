package tui

import (
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
)

// entry is one turn of the transcript: the user's message and the answer.
type entry struct {
	user string
	acc  *client.Accumulator // nil for a question whose answer is on the next page
	// msgID is the question's id and versions the ids of the questions
	// asked in its place, oldest first (none: asked once).
	msgID    string
	versions []string
	replaced bool            // a turn asked in place of another: read again when it ends, with its versions
	usage    *toolmark.Usage // the answer's tokens, as stored (a live answer's come with its end)
	model    string          // the id of the model that wrote the answer
	// the live turn's state
	turnID       string
	running      bool
	cancelling   bool
	reconnecting *client.ConnState
	err          error
	// rendered caches a finished turn's lines per view (collapsed,
	// expanded) at the renderer's width.
	rendered [2][]string
}

// frameInterval is the least time between two draws of a streaming turn
// (10 a second): text still streams smoothly at it, and each draw repaints
// a screen that scrolls as a whole — the most costly part of following a
// long answer.
const frameInterval = 100 * time.Millisecond

// frameMsg asks for the draw a streaming turn's change put off.
type frameMsg struct{}

// chat is the transcript: the conversation's history, the live turn, the
// renderer and the viewport. While a turn streams its changes are drawn
// at most once per frameInterval; the expanded view is a snapshot, kept
// as copies of the turns, that no update touches.
type chat struct {
	convID, title string
	history       []*entry
	live          *entry
	more          bool  // older messages come before the history
	before        int64 // their cursor

	r        *renderer
	vp       pane
	width    int
	frame    string // the spinner's frame
	expanded bool
	snapshot []*entry  // the expanded view's copies
	hit      *shownHit // the search hit marked, if any (hit.go)

	dirty, scheduled bool
	lastDraw         time.Time
	// settling: the live turn ended and was drawn as it streamed; its
	// full rendering is due (settle).
	settling bool
	lines    []string // the transcript's lines, rebuilt in place at each draw
}

func newChat(width int, style string) *chat {
	return &chat{r: newRenderer(width, style), width: width, frame: "⠋"}
}

func (c *chat) running() bool { return c.live != nil && c.live.running }

// resize lays the transcript out for a new size: the same content, the
// expanded view's snapshot included, wrapped anew; a search hit on the
// screen stays on it, marked.
func (c *chat) resize(width, height int) {
	hit := c.hitInView()
	if width != c.width {
		c.width = width
		c.r = newRenderer(width, c.r.style)
		c.forget()
	}
	c.vp.setSize(width, height)
	c.draw(false)
	if hit {
		c.showHitLine() // wrapped anew, it moved: it stays in view
	}
}

// setStyle renders with another markdown style.
func (c *chat) setStyle(style string) {
	if style == c.r.style {
		return
	}
	c.r = newRenderer(c.width, style)
	c.forget()
	c.draw(false)
}

// forget drops the finished turns' cached lines.
func (c *chat) forget() {
	for _, list := range [][]*entry{c.history, c.snapshot} {
		for _, e := range list {
			e.rendered = [2][]string{}
		}
	}
}

// changed records that the live turn changed: it is drawn now if a frame
// is due, else once one is (the returned command).
func (c *chat) changed() tea.Cmd {
	if c.expanded {
		return nil // the snapshot stays as it is
	}
	if wait := frameInterval - time.Since(c.lastDraw); wait > 0 {
		c.dirty = true
		if c.scheduled {
			return nil
		}
		c.scheduled = true
		return tea.Tick(wait, func(time.Time) tea.Msg { return frameMsg{} })
	}
	c.draw(false)
	return nil
}

// settleMsg asks for the full rendering of the turn that just ended
// (chat.ended).
type settleMsg struct{}

// ended draws the live turn that just ended at once, its answer as it was
// drawn while it streamed, and returns the command that asks for the full
// rendering a frame later: the highlighting of a long code block takes a
// tenth of a second and more, and its garbage keeps the program from
// putting the end on the screen meanwhile; drawn first, the end shows at
// once.
func (c *chat) ended() tea.Cmd {
	c.settling = !c.expanded
	c.draw(false)
	if !c.settling {
		return nil
	}
	return tea.Tick(frameInterval, func(time.Time) tea.Msg { return settleMsg{} })
}

// settle draws the turn that ended rendered whole.
func (c *chat) settle() {
	if c.settling {
		c.settling = false
		c.redraw()
	}
}

// frameDue draws what a change put off.
func (c *chat) frameDue() tea.Cmd {
	c.scheduled = false
	if c.dirty && !c.expanded {
		c.draw(false)
	}
	return nil
}

// redraw draws now (the spinner moved).
func (c *chat) redraw() {
	if !c.expanded {
		c.draw(false)
	}
}

// draw renders the transcript into the viewport, following its end when it
// was there (or when follow is set).
func (c *chat) draw(follow bool) {
	atBottom := c.vp.atBottom() || follow
	c.lines = c.transcript(c.lines[:0])
	c.vp.setLines(c.lines)
	if atBottom {
		c.vp.gotoBottom()
	}
	c.dirty, c.lastDraw = false, time.Now()
}

// toggleExpanded switches between the live view and the expanded view,
// taking the snapshot.
func (c *chat) toggleExpanded() {
	c.expanded = !c.expanded
	c.snapshot = nil
	if c.expanded {
		c.snapshot = append(c.snapshot, c.history...)
		if c.live != nil {
			frozen := *c.live
			frozen.acc = c.live.acc.Clone()
			frozen.rendered = [2][]string{}
			c.snapshot = append(c.snapshot, &frozen)
		}
	}
	c.draw(true)
}

// transcript appends the conversation's lines to dst: the history and the
// live turn, or the snapshot. A finished turn's lines are rendered once and
// shared; the live turn's are its answer's finished blocks, shared too, and
// the lines of what is still being written.
func (c *chat) transcript(dst []string) []string {
	view, list, live := 0, c.history, c.live
	if c.expanded {
		view, list, live = 1, c.snapshot, nil
	}
	parts := 0
	part := func(lines []string) {
		if parts > 0 {
			dst = append(dst, "")
		}
		if len(lines) == 0 {
			lines = []string{""}
		}
		dst = append(dst, lines...)
		parts++
	}
	if c.more {
		part([]string{styleMuted.Render("↑ PgUp at the top shows earlier messages")})
	}
	hit := c.hit
	if view != 0 {
		hit = nil
	}
	if hit != nil {
		hit.top = -1
	}
	for _, e := range list {
		if e.rendered[view] == nil || e.running {
			e.rendered[view] = c.entryView(nil, e, c.expanded)
			if hit != nil && hit.e == e {
				e.rendered[0] = c.marked(e.rendered[0])
			}
		}
		if hit != nil && hit.e == e {
			hit.top = len(dst) + min(parts, 1)
		}
		part(e.rendered[view])
	}
	if live != nil {
		if parts > 0 {
			dst = append(dst, "")
		}
		start := len(dst)
		dst = c.entryView(dst, live, false)
		if len(dst) == start {
			dst = append(dst, "")
		}
		parts++
	}
	if parts == 0 {
		return append(dst, styleMuted.Render("No messages yet. Ask something below; /help lists the commands."))
	}
	return dst
}

// entryView appends the lines of one turn to dst: the user's message, the
// answer and, while it runs, its status line. A frozen turn (the expanded
// view's) shows no spinner.
func (c *chat) entryView(dst []string, e *entry, frozen bool) []string {
	start := len(dst)
	if e.user != "" {
		dst = addLines(dst, styleUser.Render("› ")+ansi.Wrap(Sanitize(e.user), max(c.width-2, 10), ""))
		if v := versionLine(e); v != "" {
			dst = append(dst, styleMuted.Render(v))
		}
	}
	if e.acc == nil {
		return trimBlank(dst, start)
	}
	frame := c.frame
	if frozen {
		frame = "…"
	}
	dst = c.r.turnLines(dst, turnView{acc: e.acc, expanded: c.expanded, frame: frame, live: e == c.live && (e.running || c.settling)})
	dst = trimBlank(dst, start)
	var status string
	switch {
	case e.running && frozen:
		status = styleMuted.Render("… still running when this view was taken")
	case e.running && e.reconnecting != nil:
		status = styleWarn.Render(fmt.Sprintf("⟳ reconnecting… (attempt %d)", e.reconnecting.Attempt))
	case e.running && e.cancelling:
		status = styleMuted.Render(c.frame + " cancelling… (Ctrl-C again to quit)")
	case e.running && e.acc.Bubble() != "":
		status = statusLine(e.acc.Bubble(), c.frame)
	}
	if status != "" {
		dst = addLines(dst, status)
	}
	if e.err != nil {
		dst = addLines(dst, styleErr.Render(markErr+" "+errText(e.err)))
	}
	if u := usageLine(e); u != "" {
		dst = addLines(dst, styleMuted.Render(u))
	}
	return trimBlank(dst, start)
}

// view is the viewport.
func (c *chat) view() string { return c.vp.view() }

// lastTurn returns the newest turn shown (the live one first), or nil.
func (c *chat) lastTurn() *entry {
	if c.live != nil {
		return c.live
	}
	if n := len(c.history); n > 0 {
		return c.history[n-1]
	}
	return nil
}

// entriesOf pairs a page of messages into turns: a question and its
// answer (the answer of a page's last question may be on the next one).
func entriesOf(msgs []client.Message) []*entry {
	var out []*entry
	var cur *entry
	for _, msg := range msgs {
		if msg.Role == toolmark.RoleUser {
			cur = &entry{user: msg.Content, msgID: msg.ID, versions: msg.Versions}
			out = append(out, cur)
			continue
		}
		acc, err := client.AccumulatorOf(msg)
		if err != nil {
			continue
		}
		if cur == nil || cur.acc != nil {
			cur = &entry{}
			out = append(out, cur)
		}
		cur.acc, cur.turnID, cur.usage, cur.model = acc, msg.TurnID, msg.Usage, msg.Model
	}
	return out
}

// prepend puts an older page's turns before the history, joining a
// question cut from its answer by the page break, and keeps the screen on
// what it showed.
func (c *chat) prepend(older []*entry) {
	if n := len(older); n > 0 && len(c.history) > 0 && older[n-1].acc == nil && c.history[0].user == "" {
		c.history[0].user = older[n-1].user
		c.history[0].rendered = [2][]string{}
		older = older[:n-1]
	}
	lines := c.vp.lineCount()
	c.history = append(older, c.history...)
	c.lines = c.transcript(c.lines[:0])
	c.vp.setLines(c.lines)
	c.vp.scroll(c.vp.lineCount() - lines)
}
