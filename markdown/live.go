package markdown

import (
	"fmt"
	"sort"
	"strings"

	"github.com/yuin/goldmark/parser"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/toolcallmarkup"
	"github.com/toolmark/toolmark/turnstate"
)

// Live renders a turn's answer while it streams, with the renderer and the
// HTML policy of Render, so that the HTML it shows equals what Render makes
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
// A Live is not safe for concurrent use.
type Live struct {
	r     *Renderer
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

	version int64   // bumped by every change a follower can see
	changed []int64 // version at which each block (trailing last) last changed
	resetAt int64   // version of the last full rebuild
	err     error   // the last rendering error, returned by Update

	bubble bubble
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

// Block is one block of an Update: its index and its whole HTML.
type Block struct {
	Index int    `json:"i"`
	HTML  string `json:"html"`
}

// Update is what a follower needs to bring its copy of the rendered answer
// up to date: the blocks that changed since the version it holds (all of
// them when Reset is set: the follower drops what it has), and how many
// blocks there are now. Blocks at or past Count are gone. Status is the
// status bubble: the line to show above the streaming answer, or "".
type Update struct {
	Seq     int64   `json:"seq"`
	Version int64   `json:"-"`
	Reset   bool    `json:"reset,omitempty"`
	Count   int     `json:"count"`
	Blocks  []Block `json:"blocks"`
	Status  string  `json:"status"`
	Final   bool    `json:"final,omitempty"`
}

// Live returns a live renderer for one turn, rendering with r.
func (r *Renderer) Live() *Live {
	l := &Live{r: r, state: turnstate.New(), rootAt: map[string]int{}, elems: map[string]string{}}
	l.changed = []int64{0}
	return l
}

// NewLive returns a live renderer that renders with the default Renderer.
func NewLive() *Live { return defaultRenderer().Live() }

// Seq returns the seq of the last event applied.
func (l *Live) Seq() int64 { return l.state.Seq() }

// State returns the turn's state. The caller must not change it.
func (l *Live) State() *turnstate.State { return l.state }

// Apply applies the logged event e. Events at or before Seq are skipped,
// a snapshot included, so several followers may feed the same Live. A
// snapshot after Seq replaces everything.
func (l *Live) Apply(e toolmark.Event) error {
	if e.Seq > 0 && e.Seq <= l.state.Seq() || e.Type == toolmark.EventSnapshot && e.Seq <= l.state.Seq() && l.state.Seq() > 0 {
		return nil
	}
	if e.Type == toolmark.EventSnapshot {
		if err := l.state.ApplyEvent(e); err != nil {
			return err
		}
		l.version++
		l.rebuild()
		l.bubble = bubble{texted: l.state.HasText()}
		for _, c := range l.state.Calls() {
			if !c.Status.Final() {
				l.bubble.touch(c.ID, c.Phase != "")
			}
		}
		return nil
	}
	data, err := toolmark.DecodeData(e.Type, e.Data)
	if err != nil {
		return fmt.Errorf("event %d: %w", e.Seq, err)
	}
	if err := l.state.ApplyDecoded(e, data); err != nil {
		return err
	}
	l.version++
	switch d := data.(type) {
	case toolmark.TextDeltaData:
		if d.Text != "" {
			l.appendText(d.Text)
		}
		if strings.TrimSpace(d.Text) != "" {
			l.bubble.text()
		}
	case toolmark.ToolCallData:
		id := d.ToolCallID
		if c, err := toolcallmarkup.ParseOpenTag(d.Markup); err == nil {
			id = c.ID
		}
		l.callChanged(e.Type, id)
		l.bubble.touch(id, false)
	case toolmark.SubagentStatusData:
		if d.Message != "" {
			l.bubble.touch(d.ToolCallID, true)
		}
	}
	if l.size+l.tailLen != l.state.Len() {
		// The state changed the content in a way the events do not spell
		// out (a tag left open in stored content was closed, a tampered
		// log was repaired): start again from the content.
		l.rebuild()
	}
	return nil
}

// appendText appends text at the end of the content.
func (l *Live) appendText(s string) {
	if k := len(l.tail); k > 0 && l.tail[k-1].id == "" {
		l.tail[k-1].text += s
	} else {
		l.tail = append(l.tail, tailItem{text: s})
	}
	l.tailLen += len(s)
	l.tailDirt = true
}

// callChanged follows the content after an event of call id.
func (l *Live) callChanged(t toolmark.EventType, id string) {
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

// rerender renders finished block i again.
func (l *Live) rerender(i int) {
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
func (l *Live) renderAlone(src string) (string, error) {
	blocks, _, err := l.r.renderBlocks([]byte(src), l.allRefs())
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, tb := range blocks {
		b.WriteString(tb.html)
	}
	return b.String(), nil
}

// rebuild starts again from the state's content: one trailing block.
func (l *Live) rebuild() {
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
func (l *Live) render() {
	if !l.tailDirt {
		return
	}
	l.tailDirt = false
	var sb strings.Builder
	sb.Grow(l.tailLen)
	for _, it := range l.tail {
		sb.WriteString(it.text)
	}
	src := sb.String()
	blocks, refs, err := l.r.renderBlocks([]byte(src), l.finishedRefs())
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
		cut := blocks[last].start
		if len(newRefs) > 0 {
			// Which definitions do the finished blocks make, which the
			// trailing block?
			_, done, err := l.r.renderBlocks([]byte(src[:cut]), l.finishedRefs())
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
			_, rest, err := l.r.renderBlocks([]byte(src[cut:]), l.finishedRefs())
			if err != nil {
				l.err = err
				return
			}
			newRefs = refsOf(rest, l.refs)
		}
		for c := 0; c+1 < len(cuts); c++ {
			from, to := blocks[cuts[c]].start, blocks[cuts[c+1]].start
			var html strings.Builder
			for _, tb := range blocks[cuts[c]:cuts[c+1]] {
				html.WriteString(tb.html)
			}
			l.finish(src[from:to], html.String())
		}
		l.dropTail(cut, len(cuts)-1)
		blocks = blocks[last:]
	}
	l.tailRef = newRefs
	var html strings.Builder
	for _, tb := range blocks {
		html.WriteString(tb.html)
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

// safeCut reports whether the source may be cut before blocks[k]: what
// comes before it renders the same whatever follows.
func (l *Live) safeCut(src string, blocks []topBlock, k int) bool {
	b := blocks[k]
	if b.start <= 0 || !strings.Contains(src[b.start:], "\n") {
		return false // unknown position, or a line still being written
	}
	if !b.blankBefore && !blocks[k-1].closed {
		return false
	}
	// No top-level element may straddle the cut.
	pos := 0
	for _, it := range l.tail {
		end := pos + len(it.text)
		if it.id != "" && pos < b.start && b.start < end {
			return false
		}
		if end >= b.start {
			break
		}
		pos = end
	}
	return true
}

// finish appends a finished block.
func (l *Live) finish(src, html string) {
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
func (l *Live) dropTail(n, count int) {
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

// Update renders what changed and returns what a follower holding version
// since needs; since < 0 (or older than the last rebuild) gives every
// block, with Reset set.
func (l *Live) Update(since int64) (Update, error) {
	l.render()
	for len(l.changed) < len(l.blocks)+1 {
		l.changed = append(l.changed, l.version)
	}
	u := Update{Seq: l.state.Seq(), Version: l.version, Count: len(l.blocks) + 1, Status: l.bubble.status(l.state),
		Final: l.state.Status().Final()}
	if since < 0 || since < l.resetAt {
		u.Reset = true
		since = -1
	}
	for i := range l.blocks {
		if l.changed[i] > since {
			u.Blocks = append(u.Blocks, Block{Index: i, HTML: l.blocks[i].html})
		}
	}
	if t := len(l.blocks); l.changed[t] > since {
		u.Blocks = append(u.Blocks, Block{Index: t, HTML: l.tailHTML})
	}
	err := l.err
	l.err = nil
	return u, err
}

// HTML returns the HTML of every block, in order: Render's output for the
// content at the last applied event.
func (l *Live) HTML() (string, error) {
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
func (l *Live) Blocks() int { return len(l.blocks) }

// ---- reference definitions

func (l *Live) finishedRefs() []parser.Reference {
	out := make([]parser.Reference, 0, len(l.refs))
	for _, r := range l.refs {
		out = append(out, r)
	}
	return out
}

// allRefs returns the definitions of the finished blocks, then those of the
// trailing block that they do not define (the first definition of a label
// wins).
func (l *Live) allRefs() []parser.Reference {
	out := l.finishedRefs()
	for k, r := range l.tailRef {
		if _, ok := l.refs[k]; !ok {
			out = append(out, r)
		}
	}
	return out
}

// refsOf returns the definitions in refs that known does not hold, keyed
// by normalised label.
func refsOf(refs []parser.Reference, known map[string]parser.Reference) map[string]parser.Reference {
	var out map[string]parser.Reference
	for _, r := range refs {
		k := refKey(r)
		if _, ok := known[k]; ok {
			continue
		}
		if out == nil {
			out = map[string]parser.Reference{}
		}
		out[k] = r
	}
	return out
}

func refKey(r parser.Reference) string { return strings.ToLower(string(r.Label())) }

func sameRef(a, b parser.Reference) bool {
	return string(a.Destination()) == string(b.Destination()) && string(a.Title()) == string(b.Title())
}

func refSignature(refs []parser.Reference) string {
	if len(refs) == 0 {
		return ""
	}
	parts := make([]string, len(refs))
	for i, r := range refs {
		parts[i] = string(r.Label()) + "\x00" + string(r.Destination()) + "\x00" + string(r.Title())
	}
	sort.Strings(parts)
	return strings.Join(parts, "\x01")
}

// ---- the status bubble

// bubble decides the status bubble: Thinking… until the answer's first
// text, then the status of the tool call touched last (one still running
// first), cleared by the next text.
type bubble struct {
	touched []touch // calls with an event since the last text, oldest first
	texted  bool    // answer text arrived since the last tool event
}

type touch struct {
	id    string
	phase bool // the sub-agent's phase message is newer than its status
}

func (b *bubble) text() {
	b.touched, b.texted = b.touched[:0], true
}

func (b *bubble) touch(id string, phase bool) {
	for i, t := range b.touched {
		if t.id == id {
			b.touched = append(b.touched[:i], b.touched[i+1:]...)
			break
		}
	}
	b.touched = append(b.touched, touch{id: id, phase: phase})
}

func (b *bubble) status(s *turnstate.State) string {
	if s.Status() != toolmark.TurnRunning {
		return ""
	}
	for i := len(b.touched) - 1; i >= 0; i-- {
		if c, ok := s.Call(b.touched[i].id); ok && !c.Status.Final() {
			return callStatus(c, b.touched[i].phase)
		}
	}
	if n := len(b.touched); n > 0 {
		if c, ok := s.Call(b.touched[n-1].id); ok {
			return callStatus(c, false)
		}
	}
	if b.texted {
		return ""
	}
	return statustext.Thinking
}

// callStatus is the status line of c: the sub-agent's phase message when
// it is the newest, else the status text the server wrote into its last
// event (or, for events written without one, the same function's result).
func callStatus(c turnstate.Call, phase bool) string {
	if phase && c.Phase != "" {
		return c.Phase
	}
	return statustext.Line(c.StatusText, c.Markup)
}
