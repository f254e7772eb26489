package client

import (
	"context"
	"errors"
	"iter"
	"strings"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/toolcallmarkup"
	"github.com/toolmark/toolmark/turnstate"
)

// errStopped ends a Follow whose caller stopped iterating.
var errStopped = errors.New("client: iteration stopped")

// Events returns an iterator over a turn's events from the event after seq
// after (0: from the start), each decoded, in order and exactly once. It
// resumes by itself as Follow does (see Follow for the rules and the
// options), and ends after the turn's terminal event. A failure ends it
// with one last pair carrying the error (ctx's error when ctx ended).
//
// Stopping the loop early, or ending ctx, stops following, not the turn;
// with CancelTurnOnStop it cancels the turn on the server too.
func (c *Client) Events(ctx context.Context, turnID string, after int64, opts ...FollowOption) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		err := c.Follow(ctx, turnID, after, func(w toolmark.Event) error {
			ev, err := DecodeEvent(w)
			if err != nil {
				return err
			}
			if !yield(ev, nil) {
				return errStopped
			}
			return nil
		}, opts...)
		if err != nil && !errors.Is(err, errStopped) {
			yield(Event{}, err)
		}
	}
}

// Stream follows a turn from its start to its end, applies every event to
// an Accumulator calling h's callbacks (h may be nil), and returns the
// Accumulator: the whole answer once err is nil. When it fails, the
// Accumulator holds what arrived before. Ending ctx stops following, not
// the turn, unless CancelTurnOnStop is given.
func (c *Client) Stream(ctx context.Context, turnID string, h *Handlers, opts ...FollowOption) (*Accumulator, error) {
	acc := NewAccumulator(h)
	for ev, err := range c.Events(ctx, turnID, 0, opts...) {
		if err != nil {
			return acc, err
		}
		if err := acc.Add(ev); err != nil {
			return acc, err
		}
	}
	return acc, nil
}

// ToolCall is one tool call of a turn as it now stands: its id, parent
// (for a sub-agent's calls), name, status, stage, streamed argument text,
// parsed arguments, result or error, and status text. It is the type the
// server's turn state uses.
type ToolCall = turnstate.Call

// Stage is where a tool call is: turnstate.StageStart, StageStreaming,
// StageRunning or StageEnd.
type Stage = turnstate.Stage

// The stages of a tool call, as in package turnstate.
const (
	StageStart     = turnstate.StageStart
	StageStreaming = turnstate.StageStreaming
	StageRunning   = turnstate.StageRunning
	StageEnd       = turnstate.StageEnd
)

// Handlers are the callbacks of an Accumulator. Each may be nil. They are
// called from Add, in event order.
type Handlers struct {
	// Content is called for each piece of answer text: the piece as a
	// reader sees it (the neutralisation of "<ToolCall" undone) and the
	// whole text so far. It never gets a piece that is only whitespace
	// (the blank lines around a tool call): whitespace is held back until
	// text follows it and then comes in front of that text, and
	// whitespace that ends the answer never comes. accumulated is the
	// pieces given so far put together; a snapshot that replaces the text
	// gives it whole (chunk == accumulated).
	Content func(chunk, accumulated string)
	// Start is called once when a tool call starts, before ToolCall's
	// StageStart, with the tool's name and a title a person can read.
	Start func(ToolStart)
	// ToolCall is called at each stage of a tool call: once at start,
	// at each streaming chunk of its arguments, once when it runs (a call
	// cancelled before running skips it) and exactly once at its end,
	// also when a snapshot is what tells it.
	ToolCall func(ToolCallUpdate)
	// Todos is called with the task list each time it changes.
	Todos func([]toolmark.Todo)
	// End is called once with the turn's end.
	End func(toolmark.TurnEndData)
}

// ToolStart is a tool call that has just started, as Handlers.Start gets
// it.
type ToolStart struct {
	ID       string // the call's id, unique within its turn
	ParentID string // the sub-agent call it belongs to, or ""
	Name     string // the tool's name: "search_documents", "fetch_url", …
	// Title is the status line the server wrote for the call
	// ("Preparing search…"; for a tool without a text of its own,
	// "Preparing <name>…"), the one the page and the terminal show.
	Title string
}

// ToolCallUpdate is one stage of a tool call, as Handlers.ToolCall gets it.
type ToolCallUpdate struct {
	Stage Stage
	// Title is the call's status line at this stage, as the server wrote
	// it ("Searching knowledge base for:\nresume"; see package
	// statustext): what a person reads about the call.
	Title string
	// Call is the call as it now stands (Call.Args holds the best-effort
	// parse of the arguments so far).
	Call ToolCall
	// Chunk is the argument text that just arrived (StageStreaming).
	Chunk string
	// Params is all the argument text so far.
	Params string
	// Result is the result summary and Err the error text, at StageEnd:
	// one of them may be set, depending on Call.Status.
	Result, Err string
}

// Accumulator builds a turn's answer from its events: the text so far,
// the content with its ToolCall markup, the tool calls with their stages
// and parsed arguments, and the task list. It applies events with the
// same state (package turnstate) the server keeps, so a snapshot event
// simply replaces what it held. It is not safe for concurrent use.
type Accumulator struct {
	h    Handlers
	st   *turnstate.State
	text strings.Builder
	// given is how much of text Handlers.Content has had; the rest is
	// whitespace held back (or text not given yet, within Add).
	given int
	// reported is the last stage and argument text given to
	// Handlers.ToolCall per call id.
	reported map[string]reported
	ended    bool
}

type reported struct {
	params string
	ran    bool
	ended  bool
}

// NewAccumulator returns an empty Accumulator that calls h's callbacks
// (h may be nil).
func NewAccumulator(h *Handlers) *Accumulator {
	a := &Accumulator{st: turnstate.New(), reported: map[string]reported{}}
	if h != nil {
		a.h = *h
	}
	return a
}

// AccumulatorOf returns an Accumulator holding a stored message (an
// assistant message of GetConversation), to show a conversation's history
// with the same code as a live turn.
func AccumulatorOf(m Message) (*Accumulator, error) {
	st, err := turnstate.FromSnapshot(toolmark.SnapshotData{Content: m.Content, Seq: m.Seq,
		Status: m.Status.TurnStatus(), ToolCalls: m.ToolCalls, Todos: m.Todos, Reasoning: m.Reasoning})
	if err != nil {
		return nil, err
	}
	a := &Accumulator{st: st, reported: map[string]reported{}}
	a.text.WriteString(toolcallmarkup.Text(m.Content))
	a.given = a.text.Len()
	for _, c := range st.Calls() {
		a.reported[c.ID] = reported{params: c.ArgsText, ran: true, ended: c.Stage == turnstate.StageEnd}
	}
	a.ended = st.Status().Final()
	return a, nil
}

// Clone returns an Accumulator holding what a holds now, without its
// handlers: a still copy (the terminal client's expanded view is one).
func (a *Accumulator) Clone() *Accumulator {
	status := toolmark.MessageStreaming
	if st := a.st.Status(); st.Final() {
		status = st.MessageStatus()
	}
	c, err := AccumulatorOf(Message{Message: toolmark.Message{Content: a.Content(), Seq: a.Seq(), Status: status},
		ToolCalls: a.st.Records(), Todos: a.st.Todos()})
	if err != nil {
		return NewAccumulator(nil)
	}
	if end, ok := a.st.End(); ok {
		c.st.Apply(toolmark.Draft{Type: end.Status.EndEvent(), Data: end}, time.Time{})
	}
	return c
}

// Add applies one event and calls the handlers for what it changed.
func (a *Accumulator) Add(ev Event) error {
	if ev.Type != toolmark.EventSnapshot && ev.Seq > 0 && ev.Seq <= a.st.Seq() {
		return nil // reflected already: its text is in the text so far
	}
	if err := a.st.ApplyDecoded(ev.wire, ev.Data); err != nil {
		return err
	}
	switch d := ev.Data.(type) {
	case toolmark.TextDeltaData:
		if chunk := toolcallmarkup.RestoreText(d.Text); chunk != "" {
			a.text.WriteString(chunk)
			a.giveText()
		}
	case toolmark.ToolCallData:
		if c, ok := a.st.Call(d.ToolCallID); ok {
			a.report(c)
		}
	case toolmark.TodoUpdateData:
		if a.h.Todos != nil {
			a.h.Todos(a.st.Todos())
		}
	case toolmark.SnapshotData:
		full := toolcallmarkup.Text(a.st.Content())
		if old := a.text.String(); full != old {
			if !strings.HasPrefix(full, old[:a.given]) {
				a.given = 0 // the snapshot replaces the text given: give it whole
			}
			a.text.Reset()
			a.text.WriteString(full)
			a.giveText()
		}
		for _, c := range a.st.Calls() {
			a.report(c)
		}
		if a.h.Todos != nil && len(d.Todos) > 0 {
			a.h.Todos(a.st.Todos())
		}
	}
	if end, final := a.st.End(); final && !a.ended {
		a.ended = true
		if a.h.End != nil {
			a.h.End(end)
		}
	}
	return nil
}

// giveText gives Handlers.Content the text it has not had, unless that is
// only whitespace: that waits for the text that follows it.
func (a *Accumulator) giveText() {
	text := a.text.String()
	chunk := text[a.given:]
	if strings.TrimSpace(chunk) == "" {
		return
	}
	a.given = len(text)
	if a.h.Content != nil {
		a.h.Content(chunk, text)
	}
}

// report calls Handlers.Start and Handlers.ToolCall for the stages of c
// not reported yet.
func (a *Accumulator) report(c ToolCall) {
	r, seen := a.reported[c.ID]
	if r.ended {
		return
	}
	title := statustext.Line(c.StatusText, c.Markup)
	emit := func(u ToolCallUpdate) {
		u.Call, u.Params, u.Title = c, c.ArgsText, title
		if a.h.ToolCall != nil {
			a.h.ToolCall(u)
		}
	}
	if !seen {
		if a.h.Start != nil {
			a.h.Start(ToolStart{ID: c.ID, ParentID: c.ParentID, Name: c.Name, Title: title})
		}
		emit(ToolCallUpdate{Stage: turnstate.StageStart})
	}
	if c.ArgsText != r.params && c.Stage >= turnstate.StageStreaming {
		chunk := c.ArgsText
		if strings.HasPrefix(c.ArgsText, r.params) {
			chunk = c.ArgsText[len(r.params):]
		}
		emit(ToolCallUpdate{Stage: turnstate.StageStreaming, Chunk: chunk})
		r.params = c.ArgsText
	}
	// A call that succeeded has run, even if a snapshot is what tells it.
	if !r.ran && (c.Stage == turnstate.StageRunning || c.Status == toolcallmarkup.StatusSuccess) {
		emit(ToolCallUpdate{Stage: turnstate.StageRunning})
		r.ran = true
	}
	if c.Stage == turnstate.StageEnd {
		emit(ToolCallUpdate{Stage: turnstate.StageEnd, Result: c.Result, Err: c.Error})
		r.ended = true
	}
	a.reported[c.ID] = r
}

// Text returns the answer's text so far as a reader sees it: the content
// without its ToolCall tags, the neutralisation of "<ToolCall" undone. It
// holds the whitespace Handlers.Content has not had yet.
func (a *Accumulator) Text() string { return a.text.String() }

// Content returns the answer's content so far: text and ToolCall markup,
// as the server stores it.
func (a *Accumulator) Content() string { return a.st.Content() }

// ToolCalls returns the turn's tool calls in the order they started.
func (a *Accumulator) ToolCalls() []ToolCall { return a.st.Calls() }

// ToolCall returns the tool call with the given id.
func (a *Accumulator) ToolCall(id string) (ToolCall, bool) { return a.st.Call(id) }

// Todos returns the task list as it now stands.
func (a *Accumulator) Todos() []toolmark.Todo { return a.st.Todos() }

// Status returns the turn's status as the events tell it.
func (a *Accumulator) Status() toolmark.TurnStatus { return a.st.Status() }

// End returns the payload of the turn's terminal event, once it arrived.
func (a *Accumulator) End() (toolmark.TurnEndData, bool) { return a.st.End() }

// Seq returns the seq of the last event applied: the cursor to resume
// from.
func (a *Accumulator) Seq() int64 { return a.st.Seq() }

// Bubble returns the status line to show while the turn runs ("Thinking…",
// the status of the tool call that moved last, "" once answer text
// follows): the same rule the server applies for the page's status bubble
// (turnstate.State.Bubble).
func (a *Accumulator) Bubble() string { return a.st.Bubble() }

// Reasoning returns the model's thinking so far (its text and how long it
// thought), or nil when it did not think. The text is the model's:
// untrusted, to be shown as text.
func (a *Accumulator) Reasoning() *toolmark.Reasoning { return a.st.Reasoning() }

// Thinking reports whether the model is thinking now.
func (a *Accumulator) Thinking() bool { return a.st.Thinking() }
