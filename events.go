package toolmark

import (
	"encoding/json"
	"fmt"
	"time"
)

// EventType names one kind of event in a turn's event stream.
type EventType string

// The event types of a turn, in the order a client typically sees them.
const (
	EventTurnQueued      EventType = "turn_queued"
	EventTurnStarted     EventType = "turn_started"
	EventRoundStarted    EventType = "round_started"
	EventTextDelta       EventType = "text_delta"
	EventToolCallStarted EventType = "tool_call_started"
	EventToolCallDelta   EventType = "tool_call_delta"
	EventToolCallRunning EventType = "tool_call_running"
	EventToolCallSuccess EventType = "tool_call_success"
	EventToolCallError   EventType = "tool_call_error"
	EventTodoUpdate      EventType = "todo_update"
	EventSubagentStatus  EventType = "subagent_status"
	EventSnapshot        EventType = "snapshot"
	EventModelRetry      EventType = "model_retry"
	EventUsage           EventType = "usage"
	EventToolProgress    EventType = "tool_progress"
	EventTurnCompleted   EventType = "turn_completed"
	EventTurnFailed      EventType = "turn_failed"
	EventTurnCancelled   EventType = "turn_cancelled"
	EventReasoningDelta  EventType = "reasoning_delta"
)

// eventTypes is every event type in one place: its name, the number the
// events table stores it under (a smallint, see sql/009) and the payload
// type its data decodes to. The numbers are stored, so a number never
// changes and is never reused: a new event type takes the next one. Adding
// a type touches this table, the part that emits it, and turnstate if it
// changes a turn's state; each wire protocol's mapping test then fails
// until the protocol says what it makes of the type.
var eventTypes = []eventType{
	{EventTurnQueued, 1, decode[TurnQueuedData]},
	{EventTurnStarted, 2, decode[TurnStartedData]},
	{EventRoundStarted, 3, decode[RoundStartedData]},
	{EventTextDelta, 4, decode[TextDeltaData]},
	{EventToolCallStarted, 5, decode[ToolCallData]},
	{EventToolCallDelta, 6, decode[ToolCallData]},
	{EventToolCallRunning, 7, decode[ToolCallData]},
	{EventToolCallSuccess, 8, decode[ToolCallData]},
	{EventToolCallError, 9, decode[ToolCallData]},
	{EventTodoUpdate, 10, decode[TodoUpdateData]},
	{EventSubagentStatus, 11, decode[SubagentStatusData]},
	{EventSnapshot, 12, decode[SnapshotData]},
	{EventModelRetry, 13, decode[ModelRetryData]},
	{EventUsage, 14, decode[UsageData]},
	{EventTurnCompleted, 15, decode[TurnEndData]},
	{EventTurnFailed, 16, decode[TurnEndData]},
	{EventTurnCancelled, 17, decode[TurnEndData]},
	{EventReasoningDelta, 18, decode[ReasoningDeltaData]},
	{EventToolProgress, 19, decode[ToolProgressData]},
}

// eventType is one row of eventTypes.
type eventType struct {
	name   EventType
	code   int16
	decode func(t EventType, raw json.RawMessage) (any, error)
}

// The rows of eventTypes by name and by number.
var (
	eventTypeByName = map[EventType]*eventType{}
	eventTypeByCode = map[int16]*eventType{}
	eventTypeNames  []EventType
)

func init() {
	for i := range eventTypes {
		row := &eventTypes[i]
		if row.code <= 0 || eventTypeByName[row.name] != nil || eventTypeByCode[row.code] != nil {
			panic(fmt.Sprintf("toolmark: event type %q numbered %d twice or not at all", row.name, row.code))
		}
		eventTypeByName[row.name], eventTypeByCode[row.code] = row, row
		eventTypeNames = append(eventTypeNames, row.name)
	}
}

// EventTypes returns every event type this version knows, in the order of
// their numbers. The slice is shared: do not change it.
func EventTypes() []EventType { return eventTypeNames }

// Code returns the number the events table stores t under; ok is false for
// a type this version does not know.
func (t EventType) Code() (code int16, ok bool) {
	row := eventTypeByName[t]
	if row == nil {
		return 0, false
	}
	return row.code, true
}

// EventTypeOfCode returns the event type stored under code; ok is false for
// a number this version does not know (written by a newer one).
func EventTypeOfCode(code int16) (t EventType, ok bool) {
	row := eventTypeByCode[code]
	if row == nil {
		return "", false
	}
	return row.name, true
}

// DecodeData returns the typed payload of a logged event of type t: a value
// of the *Data struct of its family (TextDeltaData for text_delta,
// ToolCallData for every tool_call_* event, …), the inverse of how a Draft
// is marshalled. Unknown types decode to nil without error, so a consumer
// skips event types newer than itself.
func DecodeData(t EventType, raw json.RawMessage) (any, error) {
	row := eventTypeByName[t]
	if row == nil {
		return nil, nil
	}
	return row.decode(t, raw)
}

// Terminal reports whether an event of type t ends its turn's stream.
func (t EventType) Terminal() bool {
	return t == EventTurnCompleted || t == EventTurnFailed || t == EventTurnCancelled
}

// EndStatus returns the turn status a terminal event of type t stands for
// when its data names none: completed, cancelled, or failed.
func (t EventType) EndStatus() TurnStatus {
	switch t {
	case EventTurnCompleted:
		return TurnCompleted
	case EventTurnCancelled:
		return TurnCancelled
	}
	return TurnFailed
}

// EndEvent returns the type of the terminal event that ends a turn with
// the final status s: turn_completed, turn_cancelled, or turn_failed (for
// failed and interrupted).
func (s TurnStatus) EndEvent() EventType {
	switch s {
	case TurnCompleted:
		return EventTurnCompleted
	case TurnCancelled:
		return EventTurnCancelled
	}
	return EventTurnFailed
}

// Event is one entry of a turn's event log and one frame of its SSE stream.
// Seq starts at 1 within each turn and has no gaps.
type Event struct {
	Seq       int64           `json:"seq"`
	TurnID    string          `json:"turnId"`
	MessageID string          `json:"messageId"`
	Type      EventType       `json:"type"`
	Time      time.Time       `json:"time"`
	Data      json.RawMessage `json:"data"`
}

// Payloads of the events' Data field, one struct per event family. The JSON
// names are part of the public event format documented in docs/api.md.

// TurnQueuedData is the payload of turn_queued.
type TurnQueuedData struct {
	Position int `json:"position"` // 0 when a slot is free at once, else the place in the queue (1 = next)
}

// TurnStartedData is the payload of turn_started.
type TurnStartedData struct {
	Model string `json:"model,omitempty"`
}

// RoundStartedData is the payload of round_started: one model call.
type RoundStartedData struct {
	Round int `json:"round"` // 1-based
}

// TextDeltaData is the payload of text_delta. Text is already neutralised by
// toolcallmarkup, so a client appends it to the content as it is.
type TextDeltaData struct {
	Text string `json:"text"`
}

// ToolCallData is the payload of every tool_call_* event.
//
// Markup is the canonical opening tag as it now stands; a client replaces the
// tag with the same toolCallId by it (or, on tool_call_started, appends
// Markup + "</ToolCall>" to the content, or to the body of ParentID's tag).
type ToolCallData struct {
	ToolCallID string `json:"toolCallId"`
	ParentID   string `json:"parentToolCallId,omitempty"`
	Name       string `json:"name"`
	Status     string `json:"status"`
	Markup     string `json:"markup"`
	// tool_call_delta: the streamed chunk of arguments; and, while they are
	// short (up to 512 bytes), then each time they have doubled, up to
	// 8 KiB, everything so far and the best-effort parse of it (so that
	// the deltas stay linear in the arguments' size). A client that keeps
	// the arguments appends the chunks.
	Chunk       string         `json:"chunk,omitempty"`
	Accumulated string         `json:"accumulated,omitempty"`
	Arguments   map[string]any `json:"arguments,omitempty"`
	// tool_call_success: a short result summary; tool_call_error: the error.
	Result string `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
	// StatusText is the line a widget or a status bubble shows for the
	// call as it now stands ("Searching knowledge base for: …"), written
	// once by the server so that every client shows the same words.
	StatusText string `json:"statusText,omitempty"`
	// Images, on tool_call_success, are the raster images the tool
	// returned (an MCP tool's image content); the tag then has an images
	// attribute with their number.
	Images []ToolImage `json:"images,omitempty"`
}

// ToolImage is an image a tool returned: PNG, JPEG, GIF or WebP, its
// MediaType sniffed from its bytes (Data, base64 in JSON).
type ToolImage struct {
	MediaType string `json:"mediaType"`
	Data      []byte `json:"data"`
}

// TodoUpdateData is the payload of todo_update: the whole list as it now is.
type TodoUpdateData struct {
	ToolCallID string `json:"toolCallId,omitempty"`
	Todos      []Todo `json:"todos"`
}

// SubagentStatusData is the payload of subagent_status.
type SubagentStatusData struct {
	ToolCallID string `json:"toolCallId"` // the subagent tool call
	Phase      string `json:"phase"`      // "started", "round", "completed", "failed"
	Round      int    `json:"round,omitempty"`
	Message    string `json:"message,omitempty"`
}

// ToolProgressData is the payload of tool_progress: a running tool call
// reports how far it got (an MCP server's notifications/progress, or a
// built-in tool's simplifiedagent.ReportProgress). Total is 0 when unknown;
// Message is the tool's own words, untrusted text.
type ToolProgressData struct {
	ToolCallID string  `json:"toolCallId"`
	Progress   float64 `json:"progress"`
	Total      float64 `json:"total,omitempty"`
	Message    string  `json:"message,omitempty"`
}

// SnapshotData is the payload of snapshot: the whole state of the turn's
// message as of Seq, sent when a cursor is older than the retained log.
type SnapshotData struct {
	Content   string           `json:"content"`
	Seq       int64            `json:"seq"`
	Status    TurnStatus       `json:"status"`
	ToolCalls []ToolCallRecord `json:"toolCalls"`
	Todos     []Todo           `json:"todos"`
	Reasoning *Reasoning       `json:"reasoning,omitempty"` // the model's thinking so far
}

// TurnEndData is the payload of turn_completed, turn_failed and
// turn_cancelled.
type TurnEndData struct {
	Status TurnStatus `json:"status"`
	Error  string     `json:"error,omitempty"`
	Code   string     `json:"code,omitempty"`  // an error code for failures
	Usage  *Usage     `json:"usage,omitempty"` // the turn's tokens, sub-agents included, when the model reports them
}

func decode[T any](t EventType, raw json.RawMessage) (any, error) {
	var d T
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("decoding %s data: %w", t, err)
		}
	}
	return d, nil
}

// ModelRetryData is the payload of model_retry: a model call failed in a
// way that waiting may cure (rate limited, overloaded, unreachable, timed
// out) before it streamed anything, and the agent tries again after
// WaitMs. Message is the line to show meanwhile ("Rate limited — retrying
// in 3 s"), written by the server.
type ModelRetryData struct {
	ToolCallID  string `json:"toolCallId,omitempty"` // the sub-agent call whose model waits; "" for the answer's own
	Round       int    `json:"round"`
	Attempt     int    `json:"attempt"`     // the attempt that failed, 1-based
	MaxAttempts int    `json:"maxAttempts"` // the attempts the policy allows
	WaitMs      int64  `json:"waitMs"`
	Code        string `json:"code"` // ERATELIMITED, EOVERLOADED, EUNAVAILABLE or ETIMEOUT
	Message     string `json:"message"`
}

// Usage counts a model's tokens, as its service reports them.
type Usage struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
}

// Add returns u + v.
func (u Usage) Add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens}
}

// UsageData is the payload of usage: the tokens of one model call (a
// round), sent when the call ends, with the turn's total so far.
type UsageData struct {
	ToolCallID string `json:"toolCallId,omitempty"` // the sub-agent call that made it; "" for the answer's own
	Round      int    `json:"round"`
	Usage
	Total Usage `json:"total"` // the turn's tokens so far, sub-agents included
}

// ReasoningDeltaData is the payload of reasoning_delta: the model's
// thinking, streamed apart from the answer's text (it is never part of the
// content). Text is untrusted plain text: a client shows it escaped, as it
// shows any model text, never as markup.
type ReasoningDeltaData struct {
	Round int    `json:"round"`
	Text  string `json:"text,omitempty"` // the next piece of the round's displayable thinking
	// Done marks the round's last reasoning_delta: the model thought for
	// DurationMs in this round, and Parts are its reasoning items as the
	// provider gave them (signatures, redacted data: opaque, kept by the
	// server for the model's history; clients ignore them).
	Done       bool            `json:"done,omitempty"`
	DurationMs int64           `json:"durationMs,omitempty"`
	Parts      []ReasoningPart `json:"parts,omitempty"`
}
