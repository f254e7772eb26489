package api

import (
	"encoding/json"
	"io"
	"strconv"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/fanout"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// The AI SDK's UI message stream (version v1): SSE whose data lines are the
// parts ("chunks") of one assistant message, ending with "data: [DONE]".
// The parts and their fields are those the `ai` package's
// uiMessageChunkSchema accepts (ai 5.x).

// aiSDKHeader and aiSDKDone are the header that names the protocol and the
// stream's last line.
const (
	aiSDKHeader = "x-vercel-ai-ui-message-stream"
	aiSDKDone   = "data: [DONE]\n\n"
)

// aiSDKEncoder encodes one stream of a turn as UI message parts. It keeps
// which text or reasoning block and which step are open, and each tool
// call's state, so that every part it opens it closes, and every call ends
// in output-available or output-error.
type aiSDKEncoder struct {
	messageID string
	started   bool
	step      bool   // a start-step is open
	text      string // the id of the open text block, "" for none
	reasoning string // the id of the open reasoning block
	blocks    int    // blocks opened so far, for their ids
	calls     map[string]*aiSDKCall
	order     []string                  // the calls in the order they started
	subagents map[string]*aiSDKSubagent // by the sub-agent's call id
	buf       []byte
}

// aiSDKSubagent is a sub-agent call's data-subagent part: its status and
// the calls it made (nested calls, whose tool parts are the answer's like
// every call's), so a frontend tells them from the answer's own calls.
type aiSDKSubagent struct {
	toolmark.SubagentStatusData
	Calls []aiSDKNested `json:"calls"`
}

// aiSDKNested is a call a sub-agent made, as its data-subagent part lists it.
type aiSDKNested struct {
	ToolCallID string `json:"toolCallId"`
	Name       string `json:"name"`
	Status     string `json:"status"`
}

// aiSDKCall is what the encoder knows of one tool call.
type aiSDKCall struct {
	name      string
	available bool // tool-input-available was sent
	done      bool // an output part was sent
}

func newAISDKEncoder(t toolmark.Turn) *aiSDKEncoder {
	return &aiSDKEncoder{messageID: t.AssistantMessageID, calls: map[string]*aiSDKCall{}, subagents: map[string]*aiSDKSubagent{}}
}

// aiSDKParts maps every event type to the parts it becomes. Its test fails
// for an event type missing here: a new type needs a word in the protocol,
// or an explicit nothing.
var aiSDKParts = map[toolmark.EventType]func(e *aiSDKEncoder, f fanout.Frame, data any){
	toolmark.EventTurnQueued:      func(e *aiSDKEncoder, _ fanout.Frame, _ any) { e.status("Queued") },
	toolmark.EventTurnStarted:     func(*aiSDKEncoder, fanout.Frame, any) {},
	toolmark.EventRoundStarted:    (*aiSDKEncoder).round,
	toolmark.EventTextDelta:       (*aiSDKEncoder).textDelta,
	toolmark.EventReasoningDelta:  (*aiSDKEncoder).reasoningDelta,
	toolmark.EventToolCallStarted: (*aiSDKEncoder).toolCall,
	toolmark.EventToolCallDelta:   (*aiSDKEncoder).toolCall,
	toolmark.EventToolCallRunning: (*aiSDKEncoder).toolCall,
	toolmark.EventToolCallSuccess: (*aiSDKEncoder).toolCall,
	toolmark.EventToolCallError:   (*aiSDKEncoder).toolCall,
	toolmark.EventTodoUpdate: func(e *aiSDKEncoder, _ fanout.Frame, d any) {
		if d, ok := d.(toolmark.TodoUpdateData); ok {
			e.part(map[string]any{"type": "data-plan", "id": "plan", "data": map[string]any{"todos": d.Todos}})
		}
	},
	toolmark.EventSubagentStatus: func(e *aiSDKEncoder, _ fanout.Frame, d any) {
		if d, ok := d.(toolmark.SubagentStatusData); ok {
			sa := e.subagent(d.ToolCallID)
			sa.SubagentStatusData = d
			e.part(sa.part())
		}
	},
	toolmark.EventToolProgress: func(e *aiSDKEncoder, _ fanout.Frame, d any) {
		if d, ok := d.(toolmark.ToolProgressData); ok && d.Message != "" {
			e.status(d.Message)
		}
	},
	toolmark.EventModelRetry: func(e *aiSDKEncoder, _ fanout.Frame, d any) {
		if d, ok := d.(toolmark.ModelRetryData); ok {
			e.status(d.Message)
		}
	},
	toolmark.EventSnapshot:      (*aiSDKEncoder).snapshot,
	toolmark.EventUsage:         func(*aiSDKEncoder, fanout.Frame, any) {}, // in the message's metadata at the end
	toolmark.EventTurnCompleted: (*aiSDKEncoder).turnEnd,
	toolmark.EventTurnFailed:    (*aiSDKEncoder).turnEnd,
	toolmark.EventTurnCancelled: (*aiSDKEncoder).turnEnd,
}

func (e *aiSDKEncoder) write(w io.Writer, frames []fanout.Frame) error {
	e.buf = e.buf[:0]
	if !e.started {
		e.started = true
		e.part(map[string]any{"type": "start", "messageId": e.messageID})
	}
	if err := applyMapped(e, frames, aiSDKParts); err != nil {
		return err
	}
	_, err := w.Write(e.buf)
	return err
}

func (e *aiSDKEncoder) end(w io.Writer) error {
	_, err := io.WriteString(w, aiSDKDone)
	return err
}

func (e *aiSDKEncoder) part(v any) { e.buf = appendSSEData(e.buf, v) }

// status sends the status bubble's text, transient: it is not kept in the
// message.
func (e *aiSDKEncoder) status(text string) {
	e.part(map[string]any{"type": "data-status", "id": "status", "data": map[string]string{"text": text}, "transient": true})
}

func (e *aiSDKEncoder) closeBlocks() {
	e.endBlock("text", &e.text)
	e.endBlock("reasoning", &e.reasoning)
}

func (e *aiSDKEncoder) openStep() {
	if !e.step {
		e.step = true
		e.part(map[string]string{"type": "start-step"})
	}
}

func (e *aiSDKEncoder) finishStep() {
	e.closeBlocks()
	if e.step {
		e.step = false
		e.part(map[string]string{"type": "finish-step"})
	}
}

func (e *aiSDKEncoder) round(fanout.Frame, any) {
	e.finishStep()
	e.openStep()
}

func (e *aiSDKEncoder) blockID(kind string) string {
	e.blocks++
	return kind + "-" + strconv.Itoa(e.blocks)
}

// textDelta sends the text the model wrote: a text_delta's text is
// neutralised as toolmark's content holds it ("<ToolCall" written as
// "&lt;ToolCall"), which the UIMessage's text, rendered by its client as
// text, must not show — it equals the stored answer's text
// (toolcallmarkup.Text), as the history gives it.
func (e *aiSDKEncoder) textDelta(_ fanout.Frame, d any) {
	if t, ok := d.(toolmark.TextDeltaData); ok && t.Text != "" {
		e.blockDelta("text", toolcallmarkup.RestoreText(t.Text))
	}
}

// subagent returns the data-subagent part of the sub-agent call id.
func (e *aiSDKEncoder) subagent(id string) *aiSDKSubagent {
	sa := e.subagents[id]
	if sa == nil {
		sa = &aiSDKSubagent{SubagentStatusData: toolmark.SubagentStatusData{ToolCallID: id}, Calls: []aiSDKNested{}}
		e.subagents[id] = sa
	}
	return sa
}

func (sa *aiSDKSubagent) part() map[string]any {
	return map[string]any{"type": "data-subagent", "id": "subagent-" + sa.ToolCallID, "data": sa}
}

// nested records the status of tc, a call a sub-agent made, in its
// parent's data-subagent part, sent again when it changed.
func (e *aiSDKEncoder) nested(tc toolmark.ToolCallData) {
	sa := e.subagent(tc.ParentID)
	for i := range sa.Calls {
		if sa.Calls[i].ToolCallID == tc.ToolCallID {
			if sa.Calls[i].Status == tc.Status {
				return
			}
			sa.Calls[i].Status = tc.Status
			e.part(sa.part())
			return
		}
	}
	sa.Calls = append(sa.Calls, aiSDKNested{ToolCallID: tc.ToolCallID, Name: tc.Name, Status: tc.Status})
	e.part(sa.part())
}

func (e *aiSDKEncoder) reasoningDelta(_ fanout.Frame, d any) {
	if r, ok := d.(toolmark.ReasoningDeltaData); ok && r.Text != "" {
		e.blockDelta("reasoning", r.Text)
	}
}

// blockDelta appends text to the open block of kind ("text" or
// "reasoning"): the other kind's block ends first, and a block of kind
// starts when none is open.
func (e *aiSDKEncoder) blockDelta(kind, text string) {
	open, other, otherKind := &e.text, &e.reasoning, "reasoning"
	if kind == "reasoning" {
		open, other, otherKind = &e.reasoning, &e.text, "text"
	}
	e.openStep()
	e.endBlock(otherKind, other)
	if *open == "" {
		*open = e.blockID(kind)
		e.part(map[string]string{"type": kind + "-start", "id": *open})
	}
	e.part(map[string]string{"type": kind + "-delta", "id": *open, "delta": text})
}

// endBlock ends the block of kind whose id is *id, if one is open.
func (e *aiSDKEncoder) endBlock(kind string, id *string) {
	if *id != "" {
		e.part(map[string]string{"type": kind + "-end", "id": *id})
		*id = ""
	}
}

// call returns the state of a call, sending tool-input-start the first time.
func (e *aiSDKEncoder) call(id, name string) *aiSDKCall {
	c := e.calls[id]
	if c == nil {
		e.openStep()
		e.closeBlocks()
		c = &aiSDKCall{name: name}
		e.calls[id] = c
		e.order = append(e.order, id)
		e.part(map[string]any{"type": "tool-input-start", "toolCallId": id, "toolName": name})
	}
	return c
}

// available sends tool-input-available once, with the arguments as parsed.
func (e *aiSDKEncoder) available(id string, c *aiSDKCall, args any) {
	if c.available {
		return
	}
	c.available = true
	if args == nil {
		args = map[string]any{}
	}
	e.part(map[string]any{"type": "tool-input-available", "toolCallId": id, "toolName": c.name, "input": args})
}

// finishCall ends a call with an output part; errText "" means success.
func (e *aiSDKEncoder) finishCall(id string, c *aiSDKCall, output any, errText string) {
	if c.done {
		return
	}
	e.available(id, c, nil)
	c.done = true
	if errText != "" {
		e.part(map[string]any{"type": "tool-output-error", "toolCallId": id, "errorText": errText})
		return
	}
	e.part(map[string]any{"type": "tool-output-available", "toolCallId": id, "output": output})
}

func (e *aiSDKEncoder) toolCall(f fanout.Frame, d any) {
	tc, ok := d.(toolmark.ToolCallData)
	if !ok || tc.ToolCallID == "" {
		return
	}
	c := e.call(tc.ToolCallID, tc.Name)
	if tc.StatusText != "" {
		e.status(tc.StatusText)
	}
	if tc.ParentID != "" {
		e.nested(tc)
	}
	switch f.Event.Type {
	case toolmark.EventToolCallDelta:
		if tc.Chunk != "" && !c.available {
			e.part(map[string]any{"type": "tool-input-delta", "toolCallId": tc.ToolCallID, "inputTextDelta": tc.Chunk})
		}
	case toolmark.EventToolCallRunning:
		e.available(tc.ToolCallID, c, tc.Arguments)
	case toolmark.EventToolCallSuccess:
		e.available(tc.ToolCallID, c, tc.Arguments)
		e.finishCall(tc.ToolCallID, c, map[string]any{"result": tc.Result, "images": len(tc.Images)}, "")
	case toolmark.EventToolCallError:
		e.available(tc.ToolCallID, c, tc.Arguments)
		msg := tc.Error
		if msg == "" {
			msg = "The tool call was " + tc.Status + "."
		}
		e.finishCall(tc.ToolCallID, c, nil, msg)
	}
}

// snapshot stands for the events a pruned log no longer holds: the answer's
// text so far and its calls as they stand.
func (e *aiSDKEncoder) snapshot(_ fanout.Frame, d any) {
	s, ok := d.(toolmark.SnapshotData)
	if !ok {
		return
	}
	for _, r := range s.ToolCalls {
		c := e.call(r.ID, r.Name)
		if r.ParentID != "" {
			e.nested(toolmark.ToolCallData{ToolCallID: r.ID, ParentID: r.ParentID, Name: r.Name, Status: r.Status})
		}
		var args any
		if len(r.Arguments) > 0 {
			_ = json.Unmarshal(r.Arguments, &args)
		}
		switch toolcallmarkup.Status(r.Status) {
		case toolcallmarkup.StatusSuccess:
			e.finishCall(r.ID, c, map[string]any{"result": r.Result}, "")
		case toolcallmarkup.StatusError, toolcallmarkup.StatusCancelled:
			e.finishCall(r.ID, c, nil, nonEmpty(r.Error, "The tool call was "+r.Status+"."))
		default:
			e.available(r.ID, c, args)
		}
	}
	if text := toolcallmarkup.Text(s.Content); text != "" {
		e.blockDelta("text", text) // restored already
	}
}

// turnEnd closes what is open: a call still running ends as an error (a
// cancelled turn's calls), so no client shows it running; then error or
// abort, and finish.
func (e *aiSDKEncoder) turnEnd(f fanout.Frame, d any) {
	end, _ := d.(toolmark.TurnEndData)
	e.closeBlocks()
	for _, id := range e.order {
		if c := e.calls[id]; !c.done {
			e.finishCall(id, c, nil, "The tool call was cancelled.")
		}
	}
	e.finishStep()
	switch f.Event.Type {
	case toolmark.EventTurnCancelled:
		e.part(map[string]string{"type": "abort"})
		return
	case toolmark.EventTurnFailed:
		e.part(map[string]string{"type": "error", "errorText": nonEmpty(end.Error, "The turn failed.")})
	}
	meta := map[string]any{"status": f.Event.Type.EndStatus()}
	if end.Usage != nil {
		meta["usage"] = end.Usage
	}
	e.part(map[string]any{"type": "finish", "messageMetadata": meta})
}

func nonEmpty(s, or string) string {
	if s == "" {
		return or
	}
	return s
}
