package simplifiedagent

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/kaptinlin/jsonrepair"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent/tools"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// call is one tool call of a run.
type call struct {
	id       string // unique in the document
	modelID  string // the id the model gave it
	parentID string
	name     string
	tool     Tool // nil for an unknown tool
	tagged   bool
	started  bool                    // the tag (or record) exists
	tc       toolcallmarkup.ToolCall // the tag as it stands
	args     strings.Builder
	// parsedLen is how long args were when last parsed and sent whole.
	parsedLen int
	status    toolcallmarkup.Status
	result    string
	errText   string
	begin     time.Time
	end       time.Time
	owner     *loop
	images    []toolmark.ToolImage // see AttachImage
	// progressAt is when the call's last tool_progress left.
	progressAt time.Time
}

func (s *session) subagentStatus(id, phase, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emitLocked(toolmark.Draft{Type: toolmark.EventSubagentStatus, Data: toolmark.SubagentStatusData{
		ToolCallID: id, Phase: phase, Message: msg}})
}

// newCallLocked registers a call of tool name; it starts its tag once the
// name is known.
func (s *session) newCallLocked(l *loop, modelID, name string) *call {
	c := &call{modelID: modelID, parentID: l.parentID, owner: l, status: toolcallmarkup.StatusPending}
	s.calls = append(s.calls, c)
	if name != "" {
		s.startLocked(c, name)
	}
	return c
}

// startLocked gives c its unique id and, for a tagged tool, its tag.
func (s *session) startLocked(c *call, name string) {
	if c.started || s.closed {
		return
	}
	c.started = true
	c.name = name
	c.tool = c.owner.tools[name]
	_, untagged := c.tool.(untaggedTool)
	c.tagged = !untagged
	c.begin = time.Now()
	s.seq++
	base := c.modelID
	if !goodID(base) {
		base = fmt.Sprintf("call_%d", s.seq)
		if c.modelID == "" {
			c.modelID = base
		}
	}
	id := base
	for n := 2; s.ids[id]; n++ {
		id = fmt.Sprintf("%s_%d", base, n)
	}
	c.id = id
	s.ids[id] = true
	if !c.tagged {
		return
	}
	if c.parentID == "" {
		s.beforeTagLocked()
	}
	typ := name
	if strings.TrimSpace(typ) == "" {
		typ = "unknown"
	}
	tc := toolcallmarkup.ToolCall{ID: id, Type: typ, Status: toolcallmarkup.StatusPending, ParentID: c.parentID}
	if !s.parentOpenLocked(c.parentID) || toolcallmarkup.Validate(tc) != nil {
		// The parent was finalised already (an abandoned sub-agent); keep the
		// call untagged so nothing refers to a missing tag.
		c.tagged = false
		return
	}
	c.tc = toolcallmarkup.Normalize(tc)
	markup := toolcallmarkup.OpenTag(c.tc)
	if c.parentID == "" {
		s.tagOpenedLocked()
	}
	s.emitLocked(toolmark.Draft{Type: toolmark.EventToolCallStarted, Data: toolmark.ToolCallData{
		ToolCallID: id, ParentID: c.parentID, Name: name, Status: string(toolcallmarkup.StatusPending), Markup: markup,
		StatusText: s.status(c.tc)}, Tag: c.tc})
}

// parentOpenLocked reports whether a call may nest under the call id: it
// has a tag that is not final ("" is the top level).
func (s *session) parentOpenLocked(id string) bool {
	if id == "" {
		return true
	}
	for _, p := range s.calls {
		if p.id == id {
			return p.tagged && !p.tc.Status.Final()
		}
	}
	return false
}

// updateLocked changes c's tag by u and returns its new opening tag and
// status text.
func (s *session) updateLocked(c *call, u toolcallmarkup.Update) (markup, status string, err error) {
	tc, err := toolcallmarkup.ApplyUpdate(c.tc, u)
	if err != nil {
		return "", "", err
	}
	c.tc = tc
	return toolcallmarkup.OpenTag(tc), s.status(tc), nil
}

// goodID reports whether a model's tool-call id can serve as toolCallId
// as it is: 1 to 100 bytes of letters, digits and "_-.:".
func goodID(id string) bool {
	if id == "" || len(id) > 100 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.:", r)) {
			return false
		}
	}
	return true
}

// argsDeltaLocked adds a fragment of c's arguments and reports it.
func (s *session) argsDeltaLocked(c *call, chunk string) {
	c.args.WriteString(chunk)
	if !c.tagged || chunk == "" || s.closed {
		return
	}
	// The arguments so far are parsed again, and sent whole, on every
	// fragment while they are short, then each time they have doubled, up
	// to maxParsedArgs: the events and the parsing stay linear in their
	// size however small the model's fragments.
	var acc string
	var args map[string]any
	if n := c.args.Len(); n <= maxParsedArgs && (n <= eagerParsedArgs || n >= 2*c.parsedLen) {
		acc, c.parsedLen = c.args.String(), n
		args = parsePartial(acc)
	}
	var attrs []toolcallmarkup.Attr
	if t, ok := c.tool.(TagAttrsTool); ok && args != nil {
		attrs = t.TagAttrs(args)
	}
	markup, text, err := s.updateLocked(c, toolcallmarkup.Update{Extra: attrs})
	if err != nil {
		return
	}
	s.emitLocked(toolmark.Draft{Type: toolmark.EventToolCallDelta, Data: toolmark.ToolCallData{
		ToolCallID: c.id, ParentID: c.parentID, Name: c.name, Status: string(toolcallmarkup.StatusPending),
		Markup: markup, Chunk: chunk, Accumulated: acc, Arguments: args, StatusText: text}, Tag: c.tc})
}

// Streamed arguments up to eagerParsedArgs bytes are parsed again and sent
// whole (tool_call_delta's accumulated and arguments) with every fragment;
// then each time they have doubled; beyond maxParsedArgs tool_call_delta
// carries the chunk only, and tool_call_running the final arguments.
const (
	eagerParsedArgs = 512
	maxParsedArgs   = 8 << 10
)

// parsePartial returns the best-effort parse of streamed JSON arguments.
func parsePartial(s string) map[string]any {
	var m map[string]any
	if json.Unmarshal([]byte(s), &m) == nil {
		return m
	}
	fixed, err := jsonrepair.JSONRepair(s)
	if err != nil || json.Unmarshal([]byte(fixed), &m) != nil {
		return nil
	}
	// A key still being written repairs to "" or to a key with a null value.
	for k, v := range m {
		if k == "" || v == nil {
			delete(m, k)
		}
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// running moves c to running.
func (s *session) running(c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || c.status.Final() {
		return
	}
	c.status = toolcallmarkup.StatusRunning
	if !c.tagged {
		return
	}
	var attrs []toolcallmarkup.Attr
	var args map[string]any
	_ = json.Unmarshal([]byte(c.args.String()), &args)
	if t, ok := c.tool.(TagAttrsTool); ok && args != nil {
		attrs = t.TagAttrs(args)
	}
	markup, text, err := s.updateLocked(c, toolcallmarkup.Update{Status: toolcallmarkup.StatusRunning, Extra: attrs})
	if err != nil {
		return
	}
	s.emitLocked(toolmark.Draft{Type: toolmark.EventToolCallRunning, Data: toolmark.ToolCallData{
		ToolCallID: c.id, ParentID: c.parentID, Name: c.name, Status: string(c.status), Markup: markup, Arguments: args,
		StatusText: text}, Tag: c.tc})
}

// succeed ends c with its result.
func (s *session) succeed(c *call, result string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || c.status.Final() {
		return
	}
	result = truncate(result, MaxToolResultBytes)
	c.status, c.result, c.end = toolcallmarkup.StatusSuccess, result, time.Now()
	if !c.tagged {
		return
	}
	var attrs []toolcallmarkup.Attr
	if t, ok := c.tool.(ResultAttrsTool); ok {
		attrs = t.ResultAttrs(result)
	}
	attrs = append(attrs, imageAttrs(c)...)
	markup, text, err := s.updateLocked(c, toolcallmarkup.Update{Status: toolcallmarkup.StatusSuccess, Extra: attrs})
	if err != nil {
		return
	}
	s.emitLocked(toolmark.Draft{Type: toolmark.EventToolCallSuccess, Data: toolmark.ToolCallData{
		ToolCallID: c.id, ParentID: c.parentID, Name: c.name, Status: string(c.status), Markup: markup, Result: result,
		StatusText: text, Images: c.images}, Tag: c.tc})
}

// fail ends c with status (error or cancelled) and errText.
func (s *session) fail(c *call, status toolcallmarkup.Status, errText string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failLocked(c, status, errText)
}

func (s *session) failLocked(c *call, status toolcallmarkup.Status, errText string) {
	if s.closed || c.status.Final() {
		return
	}
	if errText == "" {
		errText = string(status)
	}
	c.status, c.errText, c.end = status, errText, time.Now()
	if !c.tagged {
		return
	}
	markup, text, err := s.updateLocked(c, toolcallmarkup.Update{Status: status, Error: errText})
	if err != nil {
		return
	}
	s.emitLocked(toolmark.Draft{Type: toolmark.EventToolCallError, Data: toolmark.ToolCallData{
		ToolCallID: c.id, ParentID: c.parentID, Name: c.name, Status: string(status), Markup: markup, Error: c.tc.Error,
		StatusText: text}, Tag: c.tc})
}

// finalizeCalls gives every unfinished call of l a final status after l
// stopped with err.
func (s *session) finalizeCalls(l *loop, err error, cancelled bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.calls {
		if c.owner == l {
			s.finalLocked(c, err, cancelled)
		}
	}
}

func (s *session) finalLocked(c *call, err error, cancelled bool) {
	if c.status.Final() {
		return
	}
	if !c.started {
		s.startLocked(c, "unknown")
	}
	if cancelled {
		s.failLocked(c, toolcallmarkup.StatusCancelled, "cancelled")
		return
	}
	msg := "stopped"
	if err != nil {
		msg = tools.UserMessage(err)
	}
	s.failLocked(c, toolcallmarkup.StatusError, msg)
}

// records returns the queryable record of every call.
func (s *session) records() []toolmark.ToolCallRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]toolmark.ToolCallRecord, 0, len(s.calls))
	for _, c := range s.calls {
		if !c.started {
			continue
		}
		r := toolmark.ToolCallRecord{
			ID: c.id, ParentID: c.parentID, Name: c.name, Status: string(c.status),
			Result: c.result, Error: c.errText, StartedAt: c.begin,
		}
		if a := strings.TrimSpace(c.args.String()); a != "" && json.Valid([]byte(a)) {
			r.Arguments = json.RawMessage(a)
		}
		if !c.end.IsZero() {
			end := c.end
			r.FinishedAt = &end
		}
		out = append(out, r)
	}
	return out
}
