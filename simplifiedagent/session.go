package simplifiedagent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// session is the state shared by a run and its sub-agents: the text
// neutraliser, the emit function and every tool call. It produces events;
// it keeps no document (whoever receives the events applies them to one,
// see package turnstate). Every emission happens under mu, so events leave
// in order. The layout of the top-level text is in session_text.go, the
// lifecycle of tool calls in session_calls.go.
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
	if !s.closed {
		s.todosLocked(id, slices.Clone(todos))
	}
}

// tickTodo marks the item of the task list whose text is step done, as
// the call id (a sub-agent that carried it out) ends; a list without that
// item, or with it done already, stays as it is.
func (s *session) tickTodo(id, step string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	step = strings.TrimSpace(step)
	if s.closed || step == "" {
		return
	}
	for i, t := range s.todos {
		if t.Text == step && t.Status != toolmark.TodoDone {
			todos := slices.Clone(s.todos)
			todos[i].Status = toolmark.TodoDone
			s.todosLocked(id, todos)
			return
		}
	}
}

// todosLocked makes todos (owned by the session from now on: emitted
// lists are never changed) the task list, as call id set it.
func (s *session) todosLocked(id string, todos []toolmark.Todo) {
	s.todos = todos
	s.emitLocked(toolmark.Draft{Type: toolmark.EventTodoUpdate, Data: toolmark.TodoUpdateData{ToolCallID: id, Todos: todos}})
}

func (s *session) todoList() []toolmark.Todo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]toolmark.Todo(nil), s.todos...)
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return toolcallmarkup.Truncate(s, n) + "\n[truncated]"
}
