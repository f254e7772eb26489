package toolcallmarkup

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Document is an assistant message being built: untrusted text and the
// genuine tags of its tool calls. Updating a tag costs the same whatever the
// size of the message, because the Document keeps the message as a tree of
// text runs and tags indexed by id and writes the whole string only when
// String is called.
//
// A Document is not safe for concurrent use.
type Document struct {
	root node
	byID map[string]*node
	nz   Neutraliser // untrusted text held back at a chunk boundary
	size int         // len(String())
}

type node struct {
	tc     ToolCall
	open   string // the opening tag as it stands in the content
	items  []item // the body: text runs and nested elements
	closed bool   // false only for an element left unclosed in parsed content
	// implicitParent is true when tc.ParentID comes from the element's
	// position in parsed content, not from a parentToolCallId attribute;
	// the attribute is then not written when the tag is updated.
	implicitParent bool
}

// item is a run of text (n == nil) or an element.
type item struct {
	text []byte
	n    *node
}

// NewDocument returns a Document holding content, which is trusted to be
// what a Document wrote earlier (stored content). String returns content
// unchanged until something is appended or updated. It fails on invalid
// UTF-8, NUL bytes and on two genuine tags with the same toolCallId.
func NewDocument(content string) (*Document, error) {
	if err := checkContent(content); err != nil {
		return nil, err
	}
	d := &Document{byID: make(map[string]*node), root: node{closed: true}, size: len(content)}
	spans := Scan(content)
	type open struct {
		n    *node
		span Span
	}
	var stack []open
	pos := 0
	top := func() *node {
		if len(stack) == 0 {
			return &d.root
		}
		return stack[len(stack)-1].n
	}
	closeTop := func() {
		o := stack[len(stack)-1]
		o.n.appendText(content[pos:o.span.CloseStart])
		pos = o.span.End
		stack = stack[:len(stack)-1]
	}
	for _, s := range spans {
		for len(stack) > 0 && stack[len(stack)-1].span.End <= s.Start {
			closeTop()
		}
		if _, dup := d.byID[s.Call.ID]; dup {
			return nil, fmt.Errorf("%w: %q", ErrDuplicate, s.Call.ID)
		}
		parent := top()
		parent.appendText(content[pos:s.Start])
		n := &node{tc: s.Call, open: content[s.Start:s.OpenEnd], closed: s.End > s.CloseStart}
		if s.Call.ParentID != "" {
			raw, _, _ := parseOpen(content, s.Start)
			n.implicitParent = raw.ParentID == ""
		}
		parent.items = append(parent.items, item{n: n})
		d.byID[s.Call.ID] = n
		stack = append(stack, open{n: n, span: s})
		pos = s.OpenEnd
	}
	for len(stack) > 0 {
		closeTop()
	}
	d.root.appendText(content[pos:])
	return d, nil
}

// checkContent rejects content that no Document writes.
func checkContent(content string) error {
	if strings.IndexByte(content, 0) >= 0 {
		return fmt.Errorf("%w: content holds a NUL byte", ErrInvalid)
	}
	if !utf8.ValidString(content) {
		return fmt.Errorf("%w: content is not valid UTF-8", ErrInvalid)
	}
	return nil
}

// closeTrailing closes the elements left unclosed in stored content that
// end n's body, before something is appended to it: otherwise the appended
// text or element would land inside them.
func (d *Document) closeTrailing(n *node) {
	for {
		k := len(n.items)
		if k == 0 || n.items[k-1].n == nil || n.items[k-1].n.closed {
			return
		}
		n = n.items[k-1].n
		n.closed = true
		d.size += len(closeTag)
	}
}

func (n *node) appendText(s string) {
	if s == "" {
		return
	}
	if k := len(n.items); k > 0 && n.items[k-1].n == nil {
		n.items[k-1].text = append(n.items[k-1].text, s...)
		return
	}
	n.items = append(n.items, item{text: []byte(s)})
}

func (n *node) appendBytes(b []byte) {
	if len(b) == 0 {
		return
	}
	if k := len(n.items); k > 0 && n.items[k-1].n == nil {
		n.items[k-1].text = append(n.items[k-1].text, b...)
		return
	}
	n.items = append(n.items, item{text: b})
}

// AppendText appends untrusted text (model or tool output) and returns the
// neutralised text it appended now. A suffix that the next chunk could
// change (part of "<ToolCall", part of a UTF-8 sequence) is held back until
// then or until Flush; so appending a text in one piece or byte by byte
// yields the same content.
func (d *Document) AppendText(s string) string {
	return d.appendOut(d.nz.Write(s))
}

// Flush appends the text held back by AppendText and returns it,
// neutralised. Call it before Start, at the end of a model's reply, and
// before reading String if the held-back text must be included.
func (d *Document) Flush() string {
	return d.appendOut(d.nz.Flush())
}

func (d *Document) appendOut(out string) string {
	if out == "" {
		return ""
	}
	d.closeTrailing(&d.root)
	d.root.appendText(out)
	d.size += len(out)
	return out
}

// AppendNeutralised appends text that a Document already neutralised (the
// text of a text_delta event) as it is. It is for replaying an event log;
// should the text hold a raw tag it is escaped, so no tag can be forged
// through a tampered log.
func (d *Document) AppendNeutralised(s string) {
	s = escapeRawTags(s)
	if s != "" {
		d.closeTrailing(&d.root)
		d.escapeSplitTag(s)
	}
	d.root.appendText(s)
	d.size += len(s)
}

// escapeSplitTag escapes a '<' at the end of the content that s would
// complete into a tag name: a tag split across two chunks of a tampered
// log. Text a Document wrote never needs it, because AppendText lets a '<'
// out only once what follows it decided it starts no tag name.
//
// It reads only the last bytes of the content, as many as a tag name's
// start can have: every text delta of a live turn comes here, and the
// text run it ends grows with the answer.
func (d *Document) escapeSplitTag(s string) {
	k := len(d.root.items)
	if k == 0 || d.root.items[k-1].n != nil {
		return
	}
	const longest = len("</toolcall")
	prev := d.root.items[k-1].text
	from := max(0, len(prev)-longest)
	i := bytes.LastIndexByte(prev[from:], '<')
	if i < 0 {
		return
	}
	i += from
	if matchName(string(prev[i+1:])) != partialMatch {
		return
	}
	head := s[:min(len(s), longest)]
	if matchName(string(prev[i+1:])+head) != fullMatch {
		return
	}
	fixed := make([]byte, 0, len(prev)+3)
	fixed = append(append(append(fixed, prev[:i]...), "&lt;"...), prev[i+1:]...)
	d.root.items[k-1].text = fixed
	d.size += 3
}

// Start appends the element of a new tool call at the end of the content, or
// at the end of the body of the call named by tc.ParentID, and returns its
// opening tag. An empty status means pending. Held-back text is flushed
// first (call Flush before Start to learn it). It fails if tc is invalid,
// the id exists, or the parent is missing or final.
func (d *Document) Start(tc ToolCall) (string, error) { return d.start(tc, "") }

// StartFormatted is Start for a writer that formatted the call's opening
// tag already (it sends it in its event): open must be
// OpenTag(Normalize(tc)) with tc's status set, and is kept as it is — the
// tag is not formatted a second time.
func (d *Document) StartFormatted(tc ToolCall, open string) (string, error) { return d.start(tc, open) }

func (d *Document) start(tc ToolCall, open string) (string, error) {
	if tc.Status == "" {
		tc.Status = StatusPending
	}
	if err := Validate(tc); err != nil {
		return "", err
	}
	if _, dup := d.byID[tc.ID]; dup {
		return "", fmt.Errorf("%w: %q", ErrDuplicate, tc.ID)
	}
	parent := &d.root
	if tc.ParentID != "" {
		p, ok := d.byID[tc.ParentID]
		if !ok {
			return "", fmt.Errorf("parent %q: %w", tc.ParentID, ErrNotFound)
		}
		if p.tc.Status.Final() {
			return "", fmt.Errorf("parent %q: %w", tc.ParentID, ErrFinal)
		}
		parent = p
	}
	d.Flush()
	tc = Normalize(tc)
	if open == "" {
		open = OpenTag(tc)
	}
	n := &node{tc: tc, open: open, closed: true}
	d.closeTrailing(parent)
	parent.items = append(parent.items, item{n: n})
	d.byID[tc.ID] = n
	d.size += len(n.open) + len(closeTag)
	return n.open, nil
}

// Update changes the tag of call id and returns its new opening tag. A final
// tag never changes (ErrFinal); a status never moves backwards
// (ErrTransition). On error the content is as it was.
func (d *Document) Update(id string, u Update) (string, error) { return d.update(id, u, "") }

// UpdateFormatted is Update for a writer that formatted the new opening tag
// already: open must be OpenTag of the call with u applied, and is kept as
// it is. (A tag read from stored content whose parent it did not name is
// formatted again: its stored form differs.)
func (d *Document) UpdateFormatted(id string, u Update, open string) (string, error) {
	return d.update(id, u, open)
}

func (d *Document) update(id string, u Update, open string) (string, error) {
	n, ok := d.byID[id]
	if !ok {
		return "", fmt.Errorf("%q: %w", id, ErrNotFound)
	}
	tc, err := ApplyUpdate(n.tc, u)
	if err != nil {
		return "", fmt.Errorf("%q: %w", id, err)
	}
	d.set(n, tc, open)
	return n.open, nil
}

// set gives n the call tc, with its opening tag open ("": formatted here).
func (d *Document) set(n *node, tc ToolCall, open string) {
	w := tc
	if n.implicitParent {
		w.ParentID = ""
		open = ""
	}
	if open == "" {
		open = OpenTag(w)
	}
	d.size += len(open) - len(n.open)
	n.tc, n.open = tc, open
}

// Finalize gives every tag that is not final the status s (which must be
// final) and, for s other than success, the error text errText. It returns
// the ids it changed, in document order. Cancellation and crash recovery use
// it; afterwards no tag is pending or running.
func (d *Document) Finalize(s Status, errText string) []string {
	if !s.Final() {
		return nil
	}
	var ids []string
	for _, n := range d.nodes() {
		if n.tc.Status.Final() {
			continue
		}
		tc, err := ApplyUpdate(n.tc, Update{Status: s, Error: errText})
		if err != nil {
			continue
		}
		d.set(n, tc, "")
		ids = append(ids, n.tc.ID)
	}
	return ids
}

// Get returns the tool call with the given id as its tag now stands.
func (d *Document) Get(id string) (ToolCall, bool) {
	n, ok := d.byID[id]
	if !ok {
		return ToolCall{}, false
	}
	tc := n.tc
	tc.Attrs = append([]Attr(nil), tc.Attrs...)
	return tc, true
}

// Calls returns every tool call in document order.
func (d *Document) Calls() []ToolCall {
	nodes := d.nodes()
	out := make([]ToolCall, len(nodes))
	for i, n := range nodes {
		out[i] = n.tc
		out[i].Attrs = append([]Attr(nil), n.tc.Attrs...)
	}
	return out
}

// Element returns the whole element of call id as it stands in String():
// its opening tag, the elements of its nested calls and its closing tag. It
// costs the size of the element, not of the document.
func (d *Document) Element(id string) (string, bool) {
	n, ok := d.byID[id]
	if !ok {
		return "", false
	}
	var b strings.Builder
	b.WriteString(n.open)
	n.write(&b)
	if n.closed {
		b.WriteString(closeTag)
	}
	return b.String(), true
}

// Root returns the id of the top-level call whose element holds call id
// (id itself for a top-level call).
func (d *Document) Root(id string) (string, bool) {
	n, ok := d.byID[id]
	if !ok {
		return "", false
	}
	for n.tc.ParentID != "" {
		p, ok := d.byID[n.tc.ParentID]
		if !ok {
			break
		}
		n = p
	}
	return n.tc.ID, true
}

// Len returns the length in bytes of String(), held-back text excluded.
func (d *Document) Len() int { return d.size }

// String returns the content: text and tags, without held-back text.
func (d *Document) String() string {
	var b strings.Builder
	b.Grow(d.size)
	d.root.write(&b)
	return b.String()
}

// nodes returns every tag in document order: the order of their opening
// tags in String(). A call nested under a parent comes before the calls
// that follow the parent's element, whenever it was started.
func (d *Document) nodes() []*node {
	out := make([]*node, 0, len(d.byID))
	var walk func(n *node)
	walk = func(n *node) {
		for _, it := range n.items {
			if it.n != nil {
				out = append(out, it.n)
				walk(it.n)
			}
		}
	}
	walk(&d.root)
	return out
}

func (n *node) write(b *strings.Builder) {
	for _, it := range n.items {
		if it.n == nil {
			b.Write(it.text)
			continue
		}
		b.WriteString(it.n.open)
		it.n.write(b)
		if it.n.closed {
			b.WriteString(closeTag)
		}
	}
}

// ApplyUpdate returns tc changed by u, or why it cannot change: ErrFinal
// for a final tc, ErrTransition for a status that would move backwards,
// ErrInvalid for an unknown status or attribute key. Values are normalised
// as a tag stores them. A producer that keeps its own ToolCall values (an
// agent) uses it with OpenTag to write the markup of its events.
func ApplyUpdate(tc ToolCall, u Update) (ToolCall, error) {
	if tc.Status.Final() {
		return tc, ErrFinal
	}
	next := u.Status
	if next == "" {
		next = tc.Status
	}
	if !next.Valid() {
		return tc, fmt.Errorf("%w: unknown status %q", ErrInvalid, next)
	}
	if next.stage() < tc.Status.stage() {
		return tc, fmt.Errorf("%w: %s to %s", ErrTransition, tc.Status, next)
	}
	if err := validateAttrs(u.Extra); err != nil {
		return tc, err
	}
	out := tc
	out.Status = next
	switch {
	case next == StatusSuccess:
		out.Error = ""
	case u.Error != "":
		out.Error = cleanValue("error", u.Error)
	}
	if len(u.Extra) > 0 {
		out.Attrs = mergeAttrs(tc.Attrs, u.Extra)
	}
	return out, nil
}

// Rewrite returns content with the tag of call id changed by u. Only a
// genuine tag whose toolCallId is exactly id is touched; the rest of the
// content is copied as it is. It returns ErrNotFound when there is no such
// tag, and ErrFinal or ErrTransition (with content unchanged) when the
// update is not allowed. It is linear in the length of content.
func Rewrite(content, id string, u Update) (string, error) {
	start, end, tc, ok := findOpen(content, id)
	if !ok {
		return content, fmt.Errorf("%q: %w", id, ErrNotFound)
	}
	next, err := ApplyUpdate(tc, u)
	if err != nil {
		return content, fmt.Errorf("%q: %w", id, err)
	}
	open := OpenTag(next)
	var b strings.Builder
	b.Grow(len(content) - (end - start) + len(open))
	b.WriteString(content[:start])
	b.WriteString(open)
	b.WriteString(content[end:])
	return b.String(), nil
}
