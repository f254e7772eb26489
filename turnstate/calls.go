package turnstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// Stage is where a tool call is in its life, as an integrator sees it.
type Stage int

// String returns "start", "streaming", "running" or "end".
func (s Stage) String() string {
	switch s {
	case StageStart:
		return "start"
	case StageStreaming:
		return "streaming"
	case StageRunning:
		return "running"
	case StageEnd:
		return "end"
	}
	return fmt.Sprintf("Stage(%d)", int(s))
}

// Call is one tool call of a turn as it now stands.
type Call struct {
	ID       string
	ParentID string // the sub-agent call it belongs to, or ""
	Name     string // the tool's name
	Status   toolcallmarkup.Status
	Stage    Stage
	Markup   string         // the opening tag as it stands in the content
	ArgsText string         // the streamed arguments so far (raw JSON text)
	Args     map[string]any // the best-effort parse of the arguments; final once running
	Result   string         // a short summary, at success
	Error    string         // the error, at error or cancelled
	// StatusText is the line a widget or status bubble shows, as the
	// server wrote it into the last event.
	StatusText string
	Phase      string // a sub-agent's last phase message (subagent_status)
	StartedAt  time.Time
	FinishedAt *time.Time
}

// Record returns the queryable record of c.
func (c Call) Record() toolmark.ToolCallRecord {
	r := toolmark.ToolCallRecord{
		ID: c.ID, ParentID: c.ParentID, Name: c.Name, Status: string(c.Status),
		Result: c.Result, Error: c.Error, StartedAt: c.StartedAt, FinishedAt: c.FinishedAt,
	}
	if c.Args != nil {
		if raw, err := json.Marshal(c.Args); err == nil {
			r.Arguments = raw
		}
	} else if c.ArgsText != "" && json.Valid([]byte(c.ArgsText)) {
		r.Arguments = json.RawMessage(c.ArgsText)
	}
	return r
}

func stageOf(st toolcallmarkup.Status, args bool) Stage {
	switch {
	case st.Final():
		return StageEnd
	case st == toolcallmarkup.StatusRunning:
		return StageRunning
	case args:
		return StageStreaming
	}
	return StageStart
}

// applyCall applies a tool-call event. tag is the draft's Tag: the call
// its markup was formatted from, used as it is; without one (an event read
// back from the log or the wire) the markup is parsed.
func (s *State) applyCall(typ toolmark.EventType, data toolmark.ToolCallData, tag any, at time.Time) (err error) {
	tc, ok := tag.(toolcallmarkup.ToolCall)
	if ok {
		tc = toolcallmarkup.Normalize(tc) // what parsing its markup gives
	} else {
		if tc, err = toolcallmarkup.ParseOpenTag(data.Markup); err != nil {
			return fmt.Errorf("applying %s: %w", typ, err)
		}
	}
	if tc.ID != data.ToolCallID && data.ToolCallID != "" {
		return fmt.Errorf("applying %s: markup is of call %q, not %q", typ, tc.ID, data.ToolCallID)
	}
	defer func() {
		if err == nil {
			s.touch(tc.ID, false)
			s.retry = ""
		}
	}()
	// A tagged draft's markup is the tag formatted by its writer: the
	// document keeps it as it is instead of formatting it again.
	formatted := ""
	if ok && (data.ParentID == "" || data.ParentID == tc.ParentID) {
		formatted = data.Markup
	}
	if data.ParentID != "" {
		tc.ParentID = data.ParentID
	}
	c := s.byID[tc.ID]
	var markup string
	if typ == toolmark.EventToolCallStarted {
		markup, err = s.docStart(tc, formatted)
		if errors.Is(err, toolcallmarkup.ErrDuplicate) && c != nil {
			return nil // started already: a replay over a snapshot
		}
		if err != nil {
			return fmt.Errorf("applying %s: %w", typ, err)
		}
		if c == nil {
			c = &Call{ID: tc.ID, StartedAt: at}
			s.add(c)
		}
		c.ParentID, c.Name, c.Stage = tc.ParentID, data.Name, StageStart
		if c.Name == "" {
			c.Name = tc.Type
		}
	} else {
		markup, err = s.docUpdate(tc, formatted)
		switch {
		case errors.Is(err, toolcallmarkup.ErrFinal), errors.Is(err, toolcallmarkup.ErrTransition):
			return nil // applied already
		case errors.Is(err, toolcallmarkup.ErrNotFound):
			return fmt.Errorf("applying %s: %q: %w", typ, tc.ID, ErrUnknownCall)
		case err != nil:
			return fmt.Errorf("applying %s: %w", typ, err)
		}
		if c == nil { // a tag of stored content the records did not know
			c = &Call{ID: tc.ID, ParentID: tc.ParentID, Name: data.Name, StartedAt: at}
			s.add(c)
		}
	}
	prev := c.Status
	c.Status, c.Markup = tc.Status, markup
	if data.StatusText != "" {
		c.StatusText = data.StatusText
	}
	switch typ {
	case toolmark.EventToolCallDelta:
		c.Stage = StageStreaming
		if data.Accumulated != "" {
			c.ArgsText = data.Accumulated
		} else {
			s.appendArgs(c, data.Chunk)
		}
	case toolmark.EventToolCallRunning:
		c.Stage = StageRunning
	case toolmark.EventToolCallSuccess, toolmark.EventToolCallError:
		c.Stage = StageEnd
		t := at
		c.FinishedAt = &t
		c.Result, c.Error = data.Result, data.Error
		if c.Error == "" {
			c.Error = tc.Error
		}
	}
	if data.Arguments != nil {
		c.Args = data.Arguments
	}
	if c.Status != prev || typ == toolmark.EventToolCallStarted {
		// A record changes with its status; streamed arguments are in the
		// log and reach the record when the call runs.
		s.milestone = s.milestone || c.Status != toolcallmarkup.StatusPending
		s.markDirty(c)
	}
	return nil
}

// appendArgs appends a chunk of c's streamed arguments in constant time
// (amortised): ArgsText becomes a view of a builder that grows by
// doubling, where it was a new string of all the arguments at every chunk
// (a 64 KB argument in 8-byte chunks copied 290 MB). A view handed out
// before stays as it was: a builder never changes what it wrote. And as
// the previous view shares the new one's bytes, a reader comparing the two
// (strings.HasPrefix) finds them equal by their address. When ArgsText is
// not the builder's view (an accumulated delta replaced it), the builder
// starts again from it; while it is, comparing them costs nothing (same
// bytes, same address).
func (s *State) appendArgs(c *Call, chunk string) {
	b := s.args[c.ID]
	if b == nil {
		if s.args == nil {
			s.args = map[string]*strings.Builder{}
		}
		b = &strings.Builder{}
		s.args[c.ID] = b
	}
	if b.String() != c.ArgsText {
		b.Reset()
		b.WriteString(c.ArgsText)
	}
	b.WriteString(chunk)
	c.ArgsText = b.String()
}

func (s *State) markDirty(c *Call) {
	for _, d := range s.dirty {
		if d == c {
			return
		}
	}
	s.dirty = append(s.dirty, c)
}

// Calls returns every tool call in the order they started.
func (s *State) Calls() []Call {
	out := make([]Call, len(s.calls))
	for i, c := range s.calls {
		out[i] = *c
	}
	return out
}

// Call returns the tool call with the given id.
func (s *State) Call(id string) (Call, bool) {
	c, ok := s.byID[id]
	if !ok {
		return Call{}, false
	}
	return *c, true
}

// Records returns the queryable record of every tool call, in start order.
func (s *State) Records() []toolmark.ToolCallRecord {
	out := make([]toolmark.ToolCallRecord, len(s.calls))
	for i, c := range s.calls {
		out[i] = c.Record()
	}
	return out
}

// The stages of a tool call: start (the name is known), streaming (its
// arguments arrive), running (the tool executes), end (success, error or
// cancelled; reached exactly once).
const (
	StageStart Stage = iota
	StageStreaming
	StageRunning
	StageEnd
)

// docStart starts tc's tag in the document: the writer's formatted text
// when there is one ("": formatted here).
func (s *State) docStart(tc toolcallmarkup.ToolCall, formatted string) (string, error) {
	if formatted != "" {
		return s.doc.StartFormatted(tc, formatted)
	}
	return s.doc.Start(tc)
}

// docUpdate brings tc's tag in the document to tc, as docStart does.
func (s *State) docUpdate(tc toolcallmarkup.ToolCall, formatted string) (string, error) {
	u := toolcallmarkup.Update{Status: tc.Status, Error: tc.Error, Extra: tc.Attrs}
	if formatted != "" {
		return s.doc.UpdateFormatted(tc.ID, u, formatted)
	}
	return s.doc.Update(tc.ID, u)
}
