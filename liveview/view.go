// Package liveview renders a turn's answer while it streams: the page's
// live HTML, kept beside the fan-out (package fanout) that feeds it the
// turn's committed events, one View per turn per replica shared by every
// follower.
package liveview

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/yuin/goldmark/parser"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/markdown"
	"github.com/toolmark/toolmark/turnstate"
)

// View renders a turn's answer while it streams, with a markdown.Renderer
// and its HTML policy, so that the HTML it shows equals what Render makes
// of the stored message.
//
// It is fed the turn's logged events (Apply) and keeps the turn's state (a
// turnstate.State). The message is cut into blocks: finished top-level
// blocks, rendered once, and one trailing block holding the rest, which is
// rendered again when text arrives. A block is finished when the text
// after it starts a new top-level block on a whole line after a blank line
// (or after a heading, a rule, a code block or a widget) — a point at which
// nothing that follows can change how it renders. A tool event redraws only
// the block that holds the call's top-level element.
//
// Update tells a follower what changed since the last Update it saw; the
// HTML of all blocks, in order, is Render's output for the content at the
// last applied event.
//
// A View is not safe for concurrent use.
type View struct {
	r     *markdown.Renderer
	state *turnstate.State

	blocks   []liveBlock       // finished blocks; the trailing block follows them
	tail     []tailItem        // the content after the finished blocks
	tailLen  int               // bytes in tail
	tailHTML string            // the trailing block's HTML as last rendered
	tailDirt bool              // the tail changed since it was rendered
	rootAt   map[string]int    // top-level call id → index of the finished block holding it
	elems    map[string]string // top-level call id → its element as it stands in its finished block
	size     int               // bytes in the finished blocks

	refs    map[string]parser.Reference // reference definitions of the finished blocks
	tailRef map[string]parser.Reference // those of the trailing block
	refSig  string                      // the definitions the finished blocks were rendered with

	version int64      // bumped by every change a follower can see
	todosAt int64      // version at which the plan last changed
	sent    []tailSent // the trailing block as of the last Updates
	changed []int64    // version at which each block (trailing last) last changed
	resetAt int64      // version of the last full rebuild
	err     error      // the last rendering error, returned by Update

	reasonAt  int64        // version at which the thinking last changed
	reasonLog []reasonSent // the thinking as of the last Updates

}

// liveBlock is a finished block: its source and its HTML.
type liveBlock struct {
	src  string
	html string
}

// tailItem is a run of text, or (id != "") the element of a top-level call.
type tailItem struct {
	text string
	id   string
}

// Block is one block of an Update: its index and its HTML. From, when not
// 0, says HTML continues the block the follower holds after its first From
// characters (UTF-16 code units, as a browser counts them): a paragraph or
// a code block that only grew costs what it grew by.
type Block struct {
	Index int    `json:"i"`
	HTML  string `json:"html"`
	From  int    `json:"from,omitempty"`
}

// Apply returns the block a follower holds (had) brought up to b: the
// first From UTF-16 code units of had (the unit the page counts in), then
// HTML; all of HTML when From is 0.
func (b Block) Apply(had string) string {
	if b.From == 0 {
		return b.HTML
	}
	units := 0
	for i, r := range had {
		if units == b.From {
			return had[:i] + b.HTML
		}
		units += utf16.RuneLen(r)
	}
	return had + b.HTML
}

// Update is what a follower needs to bring its copy of the rendered answer
// up to date: the blocks that changed since the version it holds (all of
// them when Reset is set: the follower drops what it has), and how many
// blocks there are now. Blocks at or past Count are gone. Status is the
// status bubble: the line to show above the streaming answer, or "".
// Todos is the plan when it changed (and in a reset); Turn the turn's end
// once it is final.
type Update struct {
	Seq     int64           `json:"seq"`
	Version int64           `json:"-"`
	Reset   bool            `json:"reset,omitempty"`
	Count   int             `json:"count"`
	Blocks  []Block         `json:"blocks"`
	Status  string          `json:"status"`
	Todos   []toolmark.Todo `json:"todos,omitempty"`
	// Reasoning is the model's thinking, when it changed (see Reasoning).
	Reasoning *Reasoning            `json:"reasoning,omitempty"`
	Turn      *toolmark.TurnEndData `json:"turn,omitempty"`
	Final     bool                  `json:"final,omitempty"`
}

// New returns the live view of one turn, rendering with r.
func New(r *markdown.Renderer) *View {
	v := &View{r: r, state: turnstate.New(), rootAt: map[string]int{}, elems: map[string]string{}}
	v.changed = []int64{0}
	return v
}

// Seq returns the seq of the last event applied.
func (l *View) Seq() int64 { return l.state.Seq() }

// State returns the turn's state. The caller must not change it.
func (l *View) State() *turnstate.State { return l.state }

// Seed replaces the view's state with st, a turn's state as of its event
// st.Seq() (a running turn's, as its runner committed it, see
// turnstate.State.CloneAt), unless the view is there already: a view that
// starts late or fell behind catches up without replaying the log. The
// view owns st from now on.
func (l *View) Seed(st *turnstate.State) {
	if st.Seq() <= l.state.Seq() {
		return
	}
	l.state = st
	l.version++
	l.replaced(toolmark.Event{}, nil)
}

// ApplyEvent applies the logged event e, decoding its data.
func (l *View) ApplyEvent(e toolmark.Event) error {
	data, err := toolmark.DecodeData(e.Type, e.Data)
	if err != nil {
		return fmt.Errorf("event %d: %w", e.Seq, err)
	}
	return l.Apply(e, toolmark.Draft{Type: e.Type, Data: data})
}

// Apply applies the logged event e whose draft is d: its payload typed (one
// of the toolmark.*Data values: what the runner committed, decoded nothing)
// and, for a tool call, the tag its markup was formatted from when the
// runner had it (the view then parses no markup).
// Events at or before Seq are skipped, a snapshot included, so several
// followers may feed the same View. A snapshot after Seq replaces
// everything.
func (l *View) Apply(e toolmark.Event, d toolmark.Draft) error {
	data := d.Data
	if e.Seq > 0 && e.Seq <= l.state.Seq() || e.Type == toolmark.EventSnapshot && e.Seq <= l.state.Seq() && l.state.Seq() > 0 {
		return nil
	}
	if err := l.state.ApplyCommitted(e, d); err != nil {
		return err
	}
	l.version++
	change, known := changes[e.Type]
	if !known {
		change = nothing // a type newer than this table: the state decides
	}
	if change(l, e, data) {
		return nil
	}
	if l.size+l.tailLen != l.state.Len() {
		// The state changed the content in a way the events do not spell
		// out (a tag left open in stored content was closed, a tampered
		// log was repaired): start again from the content.
		l.rebuild()
	}
	return nil
}

// changes maps every event type to what it changes in the view beyond the
// turn's state, which every type is applied to first; a change that
// rebuilds the view reports true. A test fails for a type without a row.
var changes = map[toolmark.EventType]func(l *View, e toolmark.Event, data any) (rebuilt bool){
	toolmark.EventTurnQueued:      nothing,
	toolmark.EventTurnStarted:     nothing,
	toolmark.EventRoundStarted:    nothing,
	toolmark.EventTextDelta:       (*View).textChanged,
	toolmark.EventToolCallStarted: (*View).toolCallChanged,
	toolmark.EventToolCallDelta:   (*View).toolCallChanged,
	toolmark.EventToolCallRunning: (*View).toolCallChanged,
	toolmark.EventToolCallSuccess: (*View).toolCallChanged,
	toolmark.EventToolCallError:   (*View).toolCallChanged,
	toolmark.EventTodoUpdate:      (*View).todosChanged,
	toolmark.EventSubagentStatus:  nothing, // shown in the bubble, which every Update reads from the state
	toolmark.EventSnapshot:        (*View).replaced,
	toolmark.EventModelRetry:      nothing, // the bubble
	toolmark.EventUsage:           nothing,
	toolmark.EventTurnCompleted:   (*View).ended,
	toolmark.EventTurnFailed:      (*View).ended,
	toolmark.EventTurnCancelled:   (*View).ended,
	toolmark.EventReasoningDelta:  (*View).reasoningChanged,
	toolmark.EventToolProgress:    nothing, // the bubble
}

func nothing(*View, toolmark.Event, any) bool { return false }

func (l *View) textChanged(_ toolmark.Event, data any) bool {
	if d, ok := data.(toolmark.TextDeltaData); ok && d.Text != "" {
		l.appendText(d.Text)
	}
	return false
}

func (l *View) toolCallChanged(e toolmark.Event, data any) bool {
	if d, ok := data.(toolmark.ToolCallData); ok {
		l.callChanged(e.Type, d.ToolCallID)
	}
	return false
}

func (l *View) todosChanged(toolmark.Event, any) bool {
	l.todosAt = l.version
	return false
}

func (l *View) reasoningChanged(toolmark.Event, any) bool {
	l.reasonAt = l.version
	return false
}

func (l *View) replaced(toolmark.Event, any) bool {
	l.todosAt, l.reasonAt = l.version, l.version
	l.rebuild()
	return true
}

func (l *View) ended(toolmark.Event, any) bool {
	l.tailDirt = true // what was held back shows now
	return false
}

// appendText appends text at the end of the content.
func (l *View) appendText(s string) {
	if k := len(l.tail); k > 0 && l.tail[k-1].id == "" {
		l.tail[k-1].text += s
	} else {
		l.tail = append(l.tail, tailItem{text: s})
	}
	l.tailLen += len(s)
	l.tailDirt = true
}

// callChanged follows the content after an event of call id.
func (l *View) callChanged(t toolmark.EventType, id string) {
	root, ok := l.state.Root(id)
	if !ok {
		return
	}
	elem, _ := l.state.Element(root)
	if t == toolmark.EventToolCallStarted && root == id {
		l.tail = append(l.tail, tailItem{id: id, text: elem})
		l.tailLen += len(elem)
		l.tailDirt = true
		return
	}
	if i, ok := l.rootAt[root]; ok {
		old := l.elems[root]
		b := &l.blocks[i]
		k := strings.Index(b.src, old)
		if k < 0 || old == "" {
			l.rebuild()
			return
		}
		b.src = b.src[:k] + elem + b.src[k+len(old):]
		l.size += len(elem) - len(old)
		l.elems[root] = elem
		l.rerender(i)
		return
	}
	for j := range l.tail {
		if l.tail[j].id == root {
			l.tailLen += len(elem) - len(l.tail[j].text)
			l.tail[j].text = elem
			l.tailDirt = true
			return
		}
	}
	l.rebuild()
}

// Update renders what changed and returns what a follower holding version
// since needs; since < 0 (or older than the last rebuild) gives every
// block, with Reset set.
func (l *View) Update(since int64) (Update, error) {
	l.render()
	for len(l.changed) < len(l.blocks)+1 {
		l.changed = append(l.changed, l.version)
	}
	u := Update{Seq: l.state.Seq(), Version: l.version, Count: len(l.blocks) + 1, Status: l.state.Bubble()}
	if since < 0 || since < l.resetAt {
		u.Reset = true
		since = -1
	}
	if l.todosAt > since {
		u.Todos = l.state.Todos()
	}
	u.Reasoning = l.reasoningUpdate(since, u.Version)
	if end, final := l.state.End(); final {
		u.Turn, u.Final = &end, true
	}
	had, haveTail := l.sentTail(since) // what a follower at since holds of its trailing block
	for i := range l.blocks {
		if l.changed[i] > since {
			u.Blocks = append(u.Blocks, blockUpdate(i, l.blocks[i].html, had, haveTail))
		}
	}
	t := len(l.blocks)
	if l.changed[t] > since {
		u.Blocks = append(u.Blocks, blockUpdate(t, l.tailHTML, had, haveTail))
	}
	l.recordTail(u.Version, t)
	err := l.err
	l.err = nil
	return u, err
}

// tailSent is the trailing block a follower holds after an Update.
type tailSent struct {
	version int64
	index   int
	html    string
}

// tailHistory is how many Updates' trailing blocks a View remembers: a
// follower further behind gets whole blocks.
const tailHistory = 8

// recordTail remembers the trailing block as of version.
func (l *View) recordTail(version int64, index int) {
	if n := len(l.sent); n > 0 && l.sent[n-1].version == version {
		return
	}
	if len(l.sent) == tailHistory {
		copy(l.sent, l.sent[1:])
		l.sent = l.sent[:tailHistory-1]
	}
	l.sent = append(l.sent, tailSent{version: version, index: index, html: l.tailHTML})
}

// sentTail returns the trailing block a follower at version since holds.
func (l *View) sentTail(since int64) (tailSent, bool) {
	for i := len(l.sent) - 1; i >= 0 && since >= 0; i-- {
		if l.sent[i].version == since {
			return l.sent[i], true
		}
	}
	return tailSent{}, false
}

// blockUpdate is the update of block i to html for a follower holding had
// as its trailing block: only what follows their common prefix when had is
// that block, the whole block otherwise.
func blockUpdate(i int, html string, had tailSent, ok bool) Block {
	if !ok || had.index != i {
		return Block{Index: i, HTML: html}
	}
	n := 0
	for n < len(html) && n < len(had.html) && html[n] == had.html[n] {
		n++
	}
	for n > 0 && n < len(html) && !utf8.RuneStart(html[n]) {
		n-- // not inside a character
	}
	return Block{Index: i, HTML: html[n:], From: utf16Len(html[:n])}
}

// utf16Len returns the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// Shown returns the source the blocks show: the content at the last
// applied event, less what is held back while the turn runs (see
// markdown.HoldBack).
func (l *View) Shown() string {
	var b strings.Builder
	for _, bl := range l.blocks {
		b.WriteString(bl.src)
	}
	var tail strings.Builder
	for _, it := range l.tail {
		tail.WriteString(it.text)
	}
	b.WriteString(l.heldBack(tail.String()))
	return b.String()
}

// HTML returns the HTML of every block, in order: Render's output for the
// content at the last applied event (Shown, while the turn runs).
func (l *View) HTML() (string, error) {
	l.render()
	var b strings.Builder
	for _, bl := range l.blocks {
		b.WriteString(bl.html)
	}
	b.WriteString(l.tailHTML)
	err := l.err
	l.err = nil
	return b.String(), err
}

// Blocks returns the number of finished blocks (the trailing block not
// counted).
func (l *View) Blocks() int { return len(l.blocks) }
