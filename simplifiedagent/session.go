package simplifiedagent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kaptinlin/jsonrepair"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent/tools"
	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// session is the state shared by a run and its sub-agents: the text
// neutraliser, the emit function and every tool call. It produces events;
// it keeps no document (whoever receives the events applies them to one,
// see package turnstate). Every emission happens under mu, so events leave
// in order.
type session struct {
	mu       sync.Mutex
	nz       toolcallmarkup.Neutraliser
	emit     toolmark.EmitFunc
	status   statustext.Func
	emitCtx  context.Context
	emitErr  error
	cancel   context.CancelCauseFunc
	closed   bool
	tail     string // the last bytes of the top-level content
	textOut  string // appended text not yet emitted (see appendLocked)
	afterTag bool   // the top-level content ends with a tag
	ids      map[string]bool
	calls    []*call
	todos    []toolmark.Todo
	seq      int
	used     toolmark.Usage // tokens of every model call so far
}

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
	status   toolcallmarkup.Status
	result   string
	errText  string
	begin    time.Time
	end      time.Time
	owner    *loop
}

func newSession(emit toolmark.EmitFunc, status statustext.Func, cancel context.CancelCauseFunc, emitCtx context.Context) *session {
	if status == nil {
		status = statustext.Text
	}
	return &session{emit: emit, status: status, cancel: cancel, emitCtx: emitCtx, ids: map[string]bool{}}
}

// resume starts the session where an answer begun elsewhere stands: its
// ids are taken, its layout continues, its task list is the current one.
func (s *session) resume(r *toolmark.Resume) {
	for _, c := range r.ToolCalls {
		s.ids[c.ID] = true
	}
	for _, tc := range toolcallmarkup.Parse(r.Content) {
		s.ids[tc.ID] = true
	}
	if n := len(r.Content); n > 0 {
		s.tail = r.Content[max(0, n-2):]
		s.afterTag = strings.HasSuffix(r.Content, "</ToolCall>")
	}
	s.todos = append([]toolmark.Todo(nil), r.Todos...)
	s.seq = len(s.ids)
}

// emitLocked sends e unless the session is closed or emission already
// failed. The first failure cancels the run.
func (s *session) emitLocked(e toolmark.Draft) {
	if s.emit == nil || s.emitErr != nil || s.closed {
		return
	}
	if e.Type != toolmark.EventTextDelta && s.textOut != "" {
		text := s.textOut
		s.textOut = ""
		s.emitLocked(toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: text}})
	}
	if err := s.emit(s.emitCtx, e); err != nil {
		s.emitErr = fmt.Errorf("emitting %s: %w", e.Type, err)
		s.cancel(s.emitErr)
	}
}

func (s *session) emitError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emitErr
}

// appendLocked adds already neutralised top-level text to the tail and
// emits it.
func (s *session) appendLocked(out string) {
	if out == "" {
		return
	}
	s.tail = (s.tail + out)[max(0, len(s.tail)+len(out)-2):]
	s.afterTag = false
	// A text_delta must not end inside "<ToolCall" or "</ToolCall": replay
	// (Document.AppendNeutralised) escapes such an end, while the text that
	// follows may show it is no tag. It waits for the next text or event.
	text := s.textOut + out
	cut := len(text)
	for k := partialTagSuffix(text[:cut]); k > 0; k = partialTagSuffix(text[:cut]) {
		cut -= k
	}
	text, s.textOut = text[:cut], text[cut:]
	if text != "" {
		s.emitLocked(toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: text}})
	}
}

// partialTagSuffix returns the length of the end of s that is a proper
// prefix of "<ToolCall" or "</ToolCall", in any letter case.
func partialTagSuffix(s string) int {
	i := strings.LastIndexByte(s, '<')
	if i < 0 {
		return 0
	}
	end := s[i:]
	for _, name := range []string{"<ToolCall", "</ToolCall"} {
		if len(end) < len(name) && strings.EqualFold(name[:len(end)], end) {
			return len(end)
		}
	}
	return 0
}

// flushTextLocked emits text kept back by appendLocked.
func (s *session) flushTextLocked() {
	if s.textOut != "" {
		text := s.textOut
		s.textOut = ""
		s.emitLocked(toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: text}})
	}
}

// text appends untrusted model text to the top-level content.
func (s *session) text(chunk string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || chunk == "" {
		return
	}
	if s.afterTag {
		chunk = strings.TrimLeft(chunk, "\r\n")
		if chunk == "" {
			return
		}
		chunk = "\n\n" + chunk
		s.afterTag = false
	}
	s.appendLocked(s.nz.Write(chunk))
}

// beforeTagLocked flushes held-back text and makes the content end with a
// blank line, so that a top-level tag starts a block of its own.
func (s *session) beforeTagLocked() {
	out := s.nz.Flush()
	s.appendLocked(out)
	if s.tail == "" {
		return
	}
	sep := "\n\n"
	if strings.HasSuffix(s.tail, "\n\n") {
		return
	} else if strings.HasSuffix(s.tail, "\n") {
		sep = "\n"
	}
	out = s.nz.Write(sep) + s.nz.Flush()
	s.appendLocked(out)
}

func (s *session) roundStarted(l *loop, round int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.parentID == "" {
		s.emitLocked(toolmark.Draft{Type: toolmark.EventRoundStarted, Data: toolmark.RoundStartedData{Round: round}})
		return
	}
	s.emitLocked(toolmark.Draft{Type: toolmark.EventSubagentStatus, Data: toolmark.SubagentStatusData{
		ToolCallID: l.parentID, Phase: "round", Round: round}})
}

// modelRetry reports that l's model call waits to be tried again.
func (s *session) modelRetry(l *loop, d toolmark.ModelRetryData) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d.ToolCallID = l.parentID
	s.emitLocked(toolmark.Draft{Type: toolmark.EventModelRetry, Data: d})
}

// usage reports the tokens of l's model call of round, when its provider
// reported any.
func (s *session) usage(l *loop, round int, u toolmark.Usage) {
	if u == (toolmark.Usage{}) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used = s.used.Add(u)
	s.emitLocked(toolmark.Draft{Type: toolmark.EventUsage, Data: toolmark.UsageData{
		ToolCallID: l.parentID, Round: round, Usage: u, Total: s.used}})
}

// totalUsage returns the tokens of every model call so far.
func (s *session) totalUsage() toolmark.Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
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
		s.afterTag = true
		s.tail = ">"
	}
	s.emitLocked(toolmark.Draft{Type: toolmark.EventToolCallStarted, Data: toolmark.ToolCallData{
		ToolCallID: id, ParentID: c.parentID, Name: name, Status: string(toolcallmarkup.StatusPending), Markup: markup,
		StatusText: s.status(c.tc)}})
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
	acc := c.args.String()
	var args map[string]any
	if len(acc) <= maxParsedArgs {
		args = parsePartial(acc)
	} else {
		acc = "" // the chunks alone, to keep the events linear in size
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
		Markup: markup, Chunk: chunk, Accumulated: acc, Arguments: args, StatusText: text}})
}

// maxParsedArgs bounds the streamed arguments that are re-parsed and sent
// whole with every fragment; beyond it tool_call_delta carries the chunk
// only, and tool_call_running the final arguments.
const maxParsedArgs = 8 << 10

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
		StatusText: text}})
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
	markup, text, err := s.updateLocked(c, toolcallmarkup.Update{Status: toolcallmarkup.StatusSuccess, Extra: attrs})
	if err != nil {
		return
	}
	s.emitLocked(toolmark.Draft{Type: toolmark.EventToolCallSuccess, Data: toolmark.ToolCallData{
		ToolCallID: c.id, ParentID: c.parentID, Name: c.name, Status: string(c.status), Markup: markup, Result: result,
		StatusText: text}})
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
		StatusText: text}})
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

// finish flushes held-back text, gives every call a final status and closes
// the session: nothing is emitted or changed after it.
func (s *session) finish(err error, cancelled bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.appendLocked(s.nz.Flush())
	for _, c := range s.calls {
		s.finalLocked(c, err, cancelled)
	}
	s.flushTextLocked()
	s.closed = true
}

func (s *session) setTodos(id string, todos []toolmark.Todo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.todos = append([]toolmark.Todo(nil), todos...)
	s.emitLocked(toolmark.Draft{Type: toolmark.EventTodoUpdate, Data: toolmark.TodoUpdateData{ToolCallID: id, Todos: s.todos}})
}

func (s *session) todoList() []toolmark.Todo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]toolmark.Todo(nil), s.todos...)
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

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return toolcallmarkup.Truncate(s, n) + "\n[truncated]"
}
