// Package turnstate holds the state of one turn's answer — its ToolCall
// document, its tool calls with their stages, and its task list — and is
// the one place that knows how an event changes it.
//
// Every consumer of a turn's events applies them to a State: the runner
// (live, from the agent's typed drafts), the crash sweep (from the stored
// snapshot and the logged events after it), the Go client and the terminal
// client (from the event stream). So the rules live once, as goldmark's AST
// is built once and walked by every renderer.
//
// The package is pure: no I/O, no clock, no goroutines. It imports only the
// root package and toolcallmarkup.
//
// # Live and logged events
//
// Apply takes a typed draft (toolmark.Draft) and is the live path: nothing
// is decoded. ApplyEvent takes a logged event (JSON data, a seq) and is the
// replay path: events at or before the state's seq are skipped, so replaying
// a log over the snapshot it was saved with is exact, and a snapshot event
// replaces the state.
//
// # Ending a turn
//
// CloseOpen returns the events that give every open tag and every
// unfinished todo a final status. The runner applies and logs them when a
// turn is cancelled or fails; the sweep does the same for a turn whose
// server died. So the stored content, the tool-call rows, the todo list and
// the event log always agree.
package turnstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// State is the state of one turn's answer. The zero value is not usable;
// create one with New or FromSnapshot. A State is not safe for concurrent
// use.
type State struct {
	// StatusText, when set, writes ToolCallData.StatusText into the
	// events CloseOpen returns.
	StatusText func(toolcallmarkup.ToolCall) string

	doc    *toolcallmarkup.Document
	calls  []*Call
	byID   map[string]*Call
	todos  []toolmark.Todo
	seq    int64
	status toolmark.TurnStatus
	queued bool // a turn_queued was applied
	queue  int  // its position: 0 when a slot was free at once
	end    toolmark.TurnEndData
	text   bool // answer text has arrived

	// the status bubble (see Touched)
	touched []Touch // calls with an event since the last text, oldest first
	texted  bool    // answer text arrived since the last tool event
	retry   string  // the message of a model_retry not yet followed by output

	usage toolmark.Usage // tokens so far (usage events)

	reasoning reasoningState // the model's thinking (reasoning_delta events)

	// args are the streamed arguments of the calls whose deltas carried
	// chunks alone, by call id (see appendArgs).
	args map[string]*strings.Builder

	// changes since the last TakeChanges
	dirty        []*Call
	todosChanged bool
	milestone    bool
}

// New returns the state of a turn that has not started.
func New() *State {
	doc, _ := toolcallmarkup.NewDocument("")
	return &State{doc: doc, byID: map[string]*Call{}, status: toolmark.TurnQueued}
}

// FromSnapshot returns the state a snapshot describes: its content, tool
// calls, todos, status and seq. Calls found in the content but not in the
// snapshot's records are taken from their tags.
func FromSnapshot(d toolmark.SnapshotData) (*State, error) {
	doc, err := toolcallmarkup.NewDocument(d.Content)
	if err != nil {
		return nil, fmt.Errorf("snapshot content: %w", err)
	}
	s := &State{doc: doc, byID: map[string]*Call{}, seq: d.Seq, status: d.Status, todos: cloneTodos(d.Todos)}
	if d.Reasoning != nil {
		s.reasoning.r = *d.Reasoning
		s.reasoning.r.Parts = append([]toolmark.ReasoningPart(nil), d.Reasoning.Parts...)
	}
	if s.status == "" {
		s.status = toolmark.TurnRunning
	}
	s.end.Status = s.status // a final snapshot's end (its error text is in the turn's record)
	for _, r := range d.ToolCalls {
		c := &Call{ID: r.ID, ParentID: r.ParentID, Name: r.Name, Status: toolcallmarkup.Status(r.Status),
			Result: r.Result, Error: r.Error, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt}
		if len(r.Arguments) > 0 {
			c.ArgsText = string(r.Arguments)
			_ = json.Unmarshal(r.Arguments, &c.Args)
		}
		s.add(c)
	}
	for _, tc := range doc.Calls() {
		c, ok := s.byID[tc.ID]
		if !ok {
			c = &Call{ID: tc.ID, ParentID: tc.ParentID, Name: tc.Type, Error: tc.Error}
			s.add(c)
		}
		c.Status, c.Markup = tc.Status, toolcallmarkup.OpenTag(tc)
	}
	for _, c := range s.calls {
		c.Stage = stageOf(c.Status, c.ArgsText != "")
	}
	s.text = toolcallmarkup.RestoreText(d.Content) != ""
	s.texted = s.text
	for _, c := range s.calls {
		if !c.Status.Final() {
			s.touch(c.ID, c.Phase != "")
		}
	}
	return s, nil
}

// Touch is a tool call that had an event since the answer's last text:
// the status bubble shows the newest one that is not final.
type Touch struct {
	ID string
	// Phase is true when the call's newest event was a sub-agent's phase
	// message, which the bubble then shows instead of the call's status.
	Phase bool
}

func (s *State) touch(id string, phase bool) {
	for i, t := range s.touched {
		if t.ID == id {
			s.touched = append(s.touched[:i], s.touched[i+1:]...)
			break
		}
	}
	s.touched = append(s.touched, Touch{ID: id, Phase: phase})
}

// Retrying returns the message of the model's retry the turn waits on
// ("Rate limited — retrying in 3 s"), or "" once output followed it.
func (s *State) Retrying() string { return s.retry }

// Usage returns the tokens the turn's model calls used so far, as the
// usage events and the end event report them.
func (s *State) Usage() toolmark.Usage { return s.usage }

// Touched returns the tool calls that had an event since the answer's last
// text, oldest first, and whether any answer text arrived since the last
// tool event: what the status bubble is made of (Bubble).
func (s *State) Touched() (calls []Touch, texted bool) { return s.touched, s.texted }

func (s *State) add(c *Call) {
	if _, dup := s.byID[c.ID]; dup {
		return
	}
	s.calls = append(s.calls, c)
	s.byID[c.ID] = c
}

// ErrUnknownCall is returned by Apply for an update of a tool call that was
// never started.
var ErrUnknownCall = errors.New("unknown tool call")

// Apply applies the typed event d, which happened at time at. Updates that
// the state already reflects (a tag already started, final, or further
// along) change nothing and are not errors, so a replay may overlap what a
// snapshot holds. It fails on a tool-call event whose markup is not one
// genuine tag, and for an update of a call that was never started
// (ErrUnknownCall); the state is then as it was.
func (s *State) Apply(d toolmark.Draft, at time.Time) error {
	switch data := d.Data.(type) {
	case toolmark.TextDeltaData:
		if data.Text != "" {
			s.doc.AppendNeutralised(data.Text)
			s.text = true
		}
		if strings.TrimSpace(data.Text) != "" {
			s.touched, s.texted, s.retry = s.touched[:0], true, ""
		}
	case toolmark.ToolCallData:
		return s.applyCall(d.Type, data, d.Tag, at)
	case toolmark.TodoUpdateData:
		s.todos = cloneTodos(data.Todos)
		s.todosChanged = true
	case toolmark.SubagentStatusData:
		if c, ok := s.byID[data.ToolCallID]; ok {
			c.Phase = data.Message
			if data.Message != "" {
				s.touch(c.ID, true)
			}
		}
	case toolmark.TurnQueuedData:
		s.status = toolmark.TurnQueued
		s.queued, s.queue = true, data.Position
	case toolmark.TurnStartedData:
		s.status = toolmark.TurnRunning
	case toolmark.TurnEndData:
		if data.Status == "" {
			data.Status = d.Type.EndStatus()
		}
		s.status, s.end, s.milestone, s.retry = data.Status, data, true, ""
		if data.Usage != nil {
			s.usage = *data.Usage
		}
	case toolmark.SnapshotData:
		n, err := FromSnapshot(data)
		if err != nil {
			return err
		}
		n.StatusText = s.StatusText
		*s = *n
	case toolmark.ToolProgressData:
		if c, ok := s.byID[data.ToolCallID]; ok && !c.Status.Final() {
			if tc, err := toolcallmarkup.ParseOpenTag(c.Markup); err == nil {
				c.Phase = statustext.Progress(tc, data.Progress, data.Total, data.Message)
				s.touch(c.ID, true)
			}
		}
	case toolmark.ModelRetryData:
		s.retry = data.Message
	case toolmark.UsageData:
		s.usage = data.Total
	case toolmark.ReasoningDeltaData:
		s.applyReasoning(data)
	case toolmark.RoundStartedData, nil:
	default:
		return fmt.Errorf("applying %s: unexpected data %T", d.Type, d.Data)
	}
	return nil
}

// ApplyEvent applies a logged event. A snapshot event replaces the state;
// an event at or before Seq is skipped; an event of a type this package
// does not know is skipped too.
func (s *State) ApplyEvent(e toolmark.Event) error {
	if s.skips(e) {
		return nil
	}
	data, err := toolmark.DecodeData(e.Type, e.Data)
	if err != nil {
		return fmt.Errorf("event %d: %w", e.Seq, err)
	}
	return s.ApplyDecoded(e, data)
}

// skips reports whether a logged event is one the state already reflects.
func (s *State) skips(e toolmark.Event) bool {
	return e.Type != toolmark.EventSnapshot && e.Seq > 0 && e.Seq <= s.seq
}

// ApplyDecoded is ApplyEvent for a logged event whose data the caller has
// decoded already (toolmark.DecodeData), so a client that needs the typed
// payload too decodes it once.
func (s *State) ApplyDecoded(e toolmark.Event, data any) error {
	return s.ApplyCommitted(e, toolmark.Draft{Type: e.Type, Data: data})
}

// ApplyCommitted is ApplyEvent for a logged event whose draft the caller
// holds: its typed payload and, for a tool call, the tag its markup was
// formatted from (Draft.Tag), which is then taken as it is, not parsed.
func (s *State) ApplyCommitted(e toolmark.Event, d toolmark.Draft) error {
	if s.skips(e) {
		return nil
	}
	if err := s.Apply(d, e.Time); err != nil {
		return fmt.Errorf("event %d: %w", e.Seq, err)
	}
	if e.Type != toolmark.EventSnapshot && e.Seq > s.seq {
		s.seq = e.Seq
	}
	return nil
}

// CloseOpen returns the events that end the turn's unfinished work with
// status (error or cancelled) and reason as the error text: a
// tool_call_error for every tag that is not final, in document order, and,
// when some todo item is not done, one todo_update that ends those items
// (cancelled, or interrupted for any other status). It does not apply them:
// the caller applies and logs them like any other event.
func (s *State) CloseOpen(status toolcallmarkup.Status, reason string) []toolmark.Draft {
	if !status.Final() || status == toolcallmarkup.StatusSuccess {
		status = toolcallmarkup.StatusError
	}
	var out []toolmark.Draft
	for _, tc := range s.doc.Calls() {
		if tc.Status.Final() {
			continue
		}
		next, err := toolcallmarkup.ApplyUpdate(tc, toolcallmarkup.Update{Status: status, Error: reason})
		if err != nil {
			continue
		}
		name := tc.Type
		if c, ok := s.byID[tc.ID]; ok && c.Name != "" {
			name = c.Name
		}
		d := toolmark.ToolCallData{ToolCallID: tc.ID, ParentID: tc.ParentID, Name: name, Status: string(status),
			Markup: toolcallmarkup.OpenTag(next), Error: next.Error}
		if s.StatusText != nil {
			d.StatusText = s.StatusText(next)
		}
		out = append(out, toolmark.Draft{Type: toolmark.EventToolCallError, Data: d, Tag: next})
	}
	todoEnd := toolmark.TodoInterrupted
	if status == toolcallmarkup.StatusCancelled {
		todoEnd = toolmark.TodoCancelled
	}
	todos, changed := cloneTodos(s.todos), false
	for i := range todos {
		if !todos[i].Status.Final() {
			todos[i].Status, changed = todoEnd, true
		}
	}
	if changed {
		out = append(out, toolmark.Draft{Type: toolmark.EventTodoUpdate, Data: toolmark.TodoUpdateData{Todos: todos}})
	}
	return out
}

// Content returns the message content: ToolCall markup (see
// toolcallmarkup.RestoreText for the plain text a reader sees).
func (s *State) Content() string { return s.doc.String() }

// Len returns the length of Content in bytes, without building it.
func (s *State) Len() int { return s.doc.Len() }

// Element returns the whole element of call id — its tag, its nested
// calls' elements and its closing tag — and Root the top-level call that
// holds it: what a renderer needs to redraw one widget without the rest of
// the message.
func (s *State) Element(id string) (string, bool) { return s.doc.Element(id) }

// Root returns the id of the top-level call whose element holds call id.
func (s *State) Root(id string) (string, bool) { return s.doc.Root(id) }

// Seq returns the seq of the last logged event applied (ApplyEvent), or of
// the snapshot the state was built from.
func (s *State) Seq() int64 { return s.seq }

// Status returns the turn's status as the events tell it.
func (s *State) Status() toolmark.TurnStatus { return s.status }

// End returns the payload of the turn's terminal event, once applied.
func (s *State) End() (toolmark.TurnEndData, bool) { return s.end, s.status.Final() }

// HasText reports whether any answer text has arrived.
func (s *State) HasText() bool { return s.text }

// Todos returns the task list as it now stands.
func (s *State) Todos() []toolmark.Todo { return cloneTodos(s.todos) }

// Changes is what changed in a State since the last TakeChanges: what a
// store must write besides the events themselves.
type Changes struct {
	Calls []toolmark.ToolCallRecord // the records of calls that started or changed status
	Todos []toolmark.Todo           // the task list, when it changed (else nil)
	// Milestone is true when a tool call started running or ended, or the
	// turn ended: a moment at which the stored content is worth updating.
	Milestone bool
}

// TakeChanges returns the changes since the last call and forgets them.
func (s *State) TakeChanges() Changes {
	var ch Changes
	for _, c := range s.dirty {
		ch.Calls = append(ch.Calls, c.Record())
	}
	if s.todosChanged {
		ch.Todos = s.Todos()
		if ch.Todos == nil {
			ch.Todos = []toolmark.Todo{}
		}
	}
	ch.Milestone = s.milestone
	s.dirty, s.todosChanged, s.milestone = s.dirty[:0], false, false
	return ch
}

func cloneTodos(t []toolmark.Todo) []toolmark.Todo {
	if t == nil {
		return nil
	}
	return append([]toolmark.Todo(nil), t...)
}

// CloneAt returns a copy of s that shares nothing with it, as of the event
// seq: the state of a turn as its runner holds it (whose drafts it applied
// without seqs, Apply) given to a consumer of its logged events, which goes
// on from the event after seq. Nothing is parsed; the copy has no changes
// to take (TakeChanges).
func (s *State) CloneAt(seq int64) *State {
	c := *s
	c.doc = s.doc.Clone()
	c.calls, c.byID = make([]*Call, len(s.calls)), make(map[string]*Call, len(s.byID))
	for i, call := range s.calls {
		cc := *call
		cc.Args = maps.Clone(call.Args)
		c.calls[i], c.byID[cc.ID] = &cc, &cc
	}
	c.todos = cloneTodos(s.todos)
	c.touched = slices.Clone(s.touched)
	c.reasoning.r.Parts = slices.Clone(s.reasoning.r.Parts)
	c.args = nil
	for id, b := range s.args {
		if c.args == nil {
			c.args = make(map[string]*strings.Builder, len(s.args))
		}
		var nb strings.Builder
		nb.WriteString(b.String())
		c.args[id] = &nb
	}
	c.dirty, c.todosChanged, c.milestone = nil, false, false
	c.seq = seq
	return &c
}
