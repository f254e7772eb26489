package api

import (
	"io"
	"strconv"
	"strings"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/fanout"
)

// AG-UI: SSE whose data lines are AG-UI events (@ag-ui/core's schemas).
// A run is one turn; its state holds the plan and every call's status, so
// that an error or a cancel is visible and not only a result:
//
//	{"plan": [{"text": "…", "status": "pending"}], "toolCalls": {"call_1": {"name": "search", "status": "running"}}}

// aguiEncoder encodes one stream of a turn as AG-UI events. It keeps the
// open text message, step and calls, so that every event it opens it
// closes before RUN_FINISHED or RUN_ERROR.
type aguiEncoder struct {
	threadID, runID, messageID string
	started                    bool
	step                       string // the open step's name
	text                       string // the open text message's id
	texts                      int
	reasoning                  string // the open reasoning message's id (its span's is aguiSpan of it)
	reasonings                 int
	calls                      map[string]*aguiCall
	order                      []string
	buf                        []byte
}

// aguiCall is what the encoder knows of one tool call.
type aguiCall struct {
	ended, result bool // TOOL_CALL_END, TOOL_CALL_RESULT sent
	status        string
}

func newAGUIEncoder(t toolmark.Turn, runID string) *aguiEncoder {
	return &aguiEncoder{threadID: t.ConversationID, runID: runID, messageID: t.AssistantMessageID, calls: map[string]*aguiCall{}}
}

// aguiEvents maps every event type to the AG-UI events it becomes; its
// test fails for an event type missing here.
var aguiEvents = map[toolmark.EventType]func(e *aguiEncoder, f fanout.Frame, data any){
	toolmark.EventTurnQueued:      func(*aguiEncoder, fanout.Frame, any) {},
	toolmark.EventTurnStarted:     func(*aguiEncoder, fanout.Frame, any) {},
	toolmark.EventRoundStarted:    (*aguiEncoder).round,
	toolmark.EventTextDelta:       (*aguiEncoder).textDelta,
	toolmark.EventReasoningDelta:  (*aguiEncoder).reasoningDelta,
	toolmark.EventToolCallStarted: (*aguiEncoder).toolCall,
	toolmark.EventToolCallDelta:   (*aguiEncoder).toolCall,
	toolmark.EventToolCallRunning: (*aguiEncoder).toolCall,
	toolmark.EventToolCallSuccess: (*aguiEncoder).toolCall,
	toolmark.EventToolCallError:   (*aguiEncoder).toolCall,
	toolmark.EventTodoUpdate: func(e *aguiEncoder, _ fanout.Frame, d any) {
		if d, ok := d.(toolmark.TodoUpdateData); ok {
			e.event(map[string]any{"type": "STATE_DELTA", "delta": []any{map[string]any{"op": "replace", "path": "/plan", "value": nonNilTodos(d.Todos)}}})
		}
	},
	toolmark.EventSubagentStatus: func(*aguiEncoder, fanout.Frame, any) {}, // the sub-agent's call carries its status
	toolmark.EventToolProgress:   func(*aguiEncoder, fanout.Frame, any) {},
	toolmark.EventModelRetry:     func(*aguiEncoder, fanout.Frame, any) {},
	toolmark.EventUsage:          func(*aguiEncoder, fanout.Frame, any) {},
	toolmark.EventSnapshot:       (*aguiEncoder).snapshot,
	toolmark.EventTurnCompleted:  (*aguiEncoder).turnEnd,
	toolmark.EventTurnFailed:     (*aguiEncoder).turnEnd,
	toolmark.EventTurnCancelled:  (*aguiEncoder).turnEnd,
}

func nonNilTodos(t []toolmark.Todo) []toolmark.Todo {
	if t == nil {
		return []toolmark.Todo{}
	}
	return t
}

func (e *aguiEncoder) write(w io.Writer, frames []fanout.Frame) error {
	e.buf = e.buf[:0]
	if !e.started {
		e.started = true
		e.event(map[string]any{"type": "RUN_STARTED", "threadId": e.threadID, "runId": e.runID})
		e.event(map[string]any{"type": "STATE_SNAPSHOT", "snapshot": map[string]any{"plan": []any{}, "toolCalls": map[string]any{}}})
	}
	if err := applyMapped(e, frames, aguiEvents); err != nil {
		return err
	}
	_, err := w.Write(e.buf)
	return err
}

func (e *aguiEncoder) end(io.Writer) error { return nil }

func (e *aguiEncoder) event(v any) { e.buf = appendSSEData(e.buf, v) }

// closeText closes the open text or reasoning message: what comes next
// (the other kind, a call, the step's end) follows it.
func (e *aguiEncoder) closeText() {
	if e.reasoning != "" {
		e.event(map[string]string{"type": "REASONING_MESSAGE_END", "messageId": e.reasoning})
		e.event(map[string]string{"type": "REASONING_END", "messageId": aguiSpan(e.reasoning)})
		e.reasoning = ""
	}
	if e.text != "" {
		e.event(map[string]string{"type": "TEXT_MESSAGE_END", "messageId": e.text})
		e.text = ""
	}
}

func (e *aguiEncoder) finishStep() {
	e.closeText()
	if e.step != "" {
		e.event(map[string]string{"type": "STEP_FINISHED", "stepName": e.step})
		e.step = ""
	}
}

func (e *aguiEncoder) round(_ fanout.Frame, d any) {
	e.finishStep()
	r, _ := d.(toolmark.RoundStartedData)
	e.step = "round " + strconv.Itoa(r.Round)
	e.event(map[string]string{"type": "STEP_STARTED", "stepName": e.step})
}

func (e *aguiEncoder) textDelta(_ fanout.Frame, d any) {
	t, ok := d.(toolmark.TextDeltaData)
	if !ok || t.Text == "" {
		return
	}
	if e.text == "" {
		e.closeText() // reasoning
		e.texts++
		e.text = e.messageID
		if e.texts > 1 {
			e.text += "-" + strconv.Itoa(e.texts)
		}
		e.event(map[string]string{"type": "TEXT_MESSAGE_START", "messageId": e.text, "role": "assistant"})
	}
	e.event(map[string]string{"type": "TEXT_MESSAGE_CONTENT", "messageId": e.text, "delta": t.Text})
}

// reasoningDelta streams the model's thinking as an AG-UI reasoning
// message, inside a reasoning span of its own; a text, a call or the
// step's end closes both.
func (e *aguiEncoder) reasoningDelta(_ fanout.Frame, d any) {
	r, ok := d.(toolmark.ReasoningDeltaData)
	if !ok || r.Text == "" {
		return
	}
	if e.reasoning == "" {
		e.closeText()
		e.reasonings++
		e.reasoning = e.messageID + "-reasoning-" + strconv.Itoa(e.reasonings)
		e.event(map[string]string{"type": "REASONING_START", "messageId": aguiSpan(e.reasoning)})
		e.event(map[string]string{"type": "REASONING_MESSAGE_START", "messageId": e.reasoning, "role": "reasoning"})
	}
	e.event(map[string]string{"type": "REASONING_MESSAGE_CONTENT", "messageId": e.reasoning, "delta": r.Text})
}

// aguiSpan is the id of the reasoning span that holds reasoning message id.
func aguiSpan(id string) string { return id + "-span" }

// pointer escapes a call id as a JSON Pointer's token (RFC 6901).
func pointer(id string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(id)
}

// setStatus records a call's status in the state.
func (e *aguiEncoder) setStatus(id, name string, c *aguiCall, status string) {
	if c.status == status {
		return
	}
	op, path, value := "replace", "/toolCalls/"+pointer(id)+"/status", any(status)
	if c.status == "" {
		op, path, value = "add", "/toolCalls/"+pointer(id), map[string]string{"name": name, "status": status}
	}
	c.status = status
	e.event(map[string]any{"type": "STATE_DELTA", "delta": []any{map[string]any{"op": op, "path": path, "value": value}}})
}

func (e *aguiEncoder) call(id, name string) *aguiCall {
	c := e.calls[id]
	if c == nil {
		e.closeText()
		c = &aguiCall{}
		e.calls[id] = c
		e.order = append(e.order, id)
		e.event(map[string]string{"type": "TOOL_CALL_START", "toolCallId": id, "toolCallName": name, "parentMessageId": e.messageID})
	}
	return c
}

func (e *aguiEncoder) endCall(id string, c *aguiCall) {
	if !c.ended {
		c.ended = true
		e.event(map[string]string{"type": "TOOL_CALL_END", "toolCallId": id})
	}
}

func (e *aguiEncoder) result(id string, c *aguiCall, content string) {
	e.endCall(id, c)
	if !c.result {
		c.result = true
		e.event(map[string]string{"type": "TOOL_CALL_RESULT", "messageId": "result-" + id, "toolCallId": id, "content": content, "role": "tool"})
	}
}

func (e *aguiEncoder) toolCall(f fanout.Frame, d any) {
	tc, ok := d.(toolmark.ToolCallData)
	if !ok || tc.ToolCallID == "" {
		return
	}
	c := e.call(tc.ToolCallID, tc.Name)
	switch f.Event.Type {
	case toolmark.EventToolCallDelta:
		if tc.Chunk != "" && !c.ended {
			e.event(map[string]string{"type": "TOOL_CALL_ARGS", "toolCallId": tc.ToolCallID, "delta": tc.Chunk})
		}
	case toolmark.EventToolCallRunning:
		e.endCall(tc.ToolCallID, c)
	case toolmark.EventToolCallSuccess:
		e.result(tc.ToolCallID, c, tc.Result)
	case toolmark.EventToolCallError:
		e.result(tc.ToolCallID, c, nonEmpty(tc.Error, "The tool call was "+tc.Status+"."))
	}
	e.setStatus(tc.ToolCallID, tc.Name, c, tc.Status)
}

// snapshot stands for the events a pruned log no longer holds.
func (e *aguiEncoder) snapshot(_ fanout.Frame, d any) {
	s, ok := d.(toolmark.SnapshotData)
	if !ok {
		return
	}
	calls := map[string]any{}
	for _, r := range s.ToolCalls {
		c := e.call(r.ID, r.Name)
		c.status = r.Status
		e.endCall(r.ID, c)
		calls[r.ID] = map[string]string{"name": r.Name, "status": r.Status}
	}
	e.event(map[string]any{"type": "STATE_SNAPSHOT", "snapshot": map[string]any{"plan": nonNilTodos(s.Todos), "toolCalls": calls}})
}

// turnEnd closes what is open (a call a cancelled turn left is recorded as
// cancelled) and ends the run.
func (e *aguiEncoder) turnEnd(f fanout.Frame, d any) {
	end, _ := d.(toolmark.TurnEndData)
	e.closeText()
	for _, id := range e.order {
		if c := e.calls[id]; !c.result {
			e.result(id, c, "The tool call was cancelled.")
			e.setStatus(id, "", c, "cancelled")
		}
	}
	e.finishStep()
	if f.Event.Type == toolmark.EventTurnFailed {
		e.event(map[string]string{"type": "RUN_ERROR", "message": nonEmpty(end.Error, "The turn failed."), "code": end.Code})
		return
	}
	finished := map[string]any{"type": "RUN_FINISHED", "threadId": e.threadID, "runId": e.runID}
	if f.Event.Type == toolmark.EventTurnCancelled {
		finished["outcome"] = map[string]string{"type": "cancelled"}
	}
	e.event(finished)
}
