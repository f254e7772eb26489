// Package toolmark holds the domain types shared by every part of the system:
// events of a turn, turns, conversations, messages, tool-call records, todos
// and the error codes that the HTTP layer maps to statuses.
//
// It imports only the standard library. The packages that do the work
// import it, not each other's internals; internal/app wires them together
// and cmd/toolmark holds the flags and the environment.
package toolmark

import (
	"context"
	"encoding/json"
	"time"
)

// Draft is an event before it is logged: its type and its payload, one of
// the *Data structs of this package as a value (TextDeltaData,
// ToolCallData, …). An agent emits drafts; the runner applies each to the
// turn's state, gives it a seq and a time, and marshals it once, when it
// persists it.
type Draft struct {
	Type EventType
	Data any
	// Tag is, for a tool-call draft, the toolcallmarkup.ToolCall its
	// ToolCallData.Markup was formatted from, when the writer has it: the
	// turn's state then takes it as it is and never parses the markup
	// (the root package imports no other package, hence any).
	Tag any
}

// EmitFunc receives the drafts of a turn, one at a time and in order. An
// error stops the producer.
type EmitFunc func(ctx context.Context, d Draft) error

// TurnStatus is the lifecycle state of a turn.
type TurnStatus string

// The statuses a turn moves through. Completed, failed, cancelled and
// interrupted are final.
const (
	TurnQueued      TurnStatus = "queued"
	TurnRunning     TurnStatus = "running"
	TurnCompleted   TurnStatus = "completed"
	TurnFailed      TurnStatus = "failed"
	TurnCancelled   TurnStatus = "cancelled"
	TurnInterrupted TurnStatus = "interrupted"
)

// Final reports whether s is an end state.
func (s TurnStatus) Final() bool {
	switch s {
	case TurnCompleted, TurnFailed, TurnCancelled, TurnInterrupted:
		return true
	}
	return false
}

// MessageRole is who wrote a message.
type MessageRole string

// Message roles.
const (
	RoleUser      MessageRole = "user"
	RoleAssistant MessageRole = "assistant"
)

// MessageStatus tells whether an assistant message is still being written.
type MessageStatus string

// Message statuses. A user message is always complete.
const (
	MessageStreaming   MessageStatus = "streaming"
	MessageComplete    MessageStatus = "complete"
	MessageFailed      MessageStatus = "failed"
	MessageCancelled   MessageStatus = "cancelled"
	MessageInterrupted MessageStatus = "interrupted"
)

// TurnStatus returns the status of the turn an assistant message with
// status s belongs to (running while it streams).
func (s MessageStatus) TurnStatus() TurnStatus {
	switch s {
	case MessageComplete:
		return TurnCompleted
	case MessageFailed:
		return TurnFailed
	case MessageCancelled:
		return TurnCancelled
	case MessageInterrupted:
		return TurnInterrupted
	}
	return TurnRunning
}

// MessageStatus returns the status of a final turn's assistant message.
func (s TurnStatus) MessageStatus() MessageStatus {
	switch s {
	case TurnCompleted:
		return MessageComplete
	case TurnCancelled:
		return MessageCancelled
	case TurnInterrupted:
		return MessageInterrupted
	}
	return MessageFailed
}

// User is an account; in local auth mode there is exactly one.
type User struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
}

// Conversation is a chat owned by one user.
type Conversation struct {
	ID        string    `json:"id"`
	OwnerID   string    `json:"-"`
	Title     string    `json:"title"`
	Summary   string    `json:"summary,omitempty"` // compacted history of the oldest turns
	Model     string    `json:"model,omitempty"`   // the model of its latest turn, used by a turn that names none
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Running is true while a turn of the conversation is queued or
	// running (set by lists).
	Running bool `json:"running,omitempty"`
	// Snippet is the text around a search's match (set by searches).
	Snippet string `json:"snippet,omitempty"`
	// HitMessageID is the message the snippet comes from, the latest that
	// holds the text (set by searches; "" when only the title matched).
	HitMessageID string `json:"hitMessageId,omitempty"`
}

// Message is one message of a conversation. An assistant message's Content
// is ToolCall markup (see package toolcallmarkup) and reflects the turn's
// event log up to and including Seq.
type Message struct {
	ID string `json:"id"`
	// ReplacedBy is the turn that replaced the message (a retry, a
	// regeneration or an edit of it or of an earlier one); "" while it is
	// part of its conversation.
	ReplacedBy     string        `json:"replacedBy,omitempty"`
	Pos            int64         `json:"pos"` // the message's place in its conversation: a cursor for paging
	ConversationID string        `json:"conversationId"`
	TurnID         string        `json:"turnId,omitempty"`
	Role           MessageRole   `json:"role"`
	Content        string        `json:"content"`
	Status         MessageStatus `json:"status"`
	Seq            int64         `json:"seq"`
	CreatedAt      time.Time     `json:"createdAt"`
	UpdatedAt      time.Time     `json:"updatedAt"`
	// Reasoning is an assistant message's thinking, when its model thought
	// (its provider items stay on the server).
	Reasoning *Reasoning `json:"reasoning,omitempty"`
}

// Turn is one user message and the assistant's answer to it, run as a
// background job that holds a lease while it runs.
type Turn struct {
	ID                 string     `json:"id"`
	ConversationID     string     `json:"conversationId"`
	UserMessageID      string     `json:"userMessageId"`
	AssistantMessageID string     `json:"assistantMessageId"`
	Status             TurnStatus `json:"status"`
	Error              string     `json:"error,omitempty"`
	IdempotencyKey     string     `json:"-"`
	LeaseOwner         string     `json:"-"`
	LeaseExpiresAt     *time.Time `json:"-"`
	LastSeq            int64      `json:"seq"`
	// Model is the id of the model that answers the turn (GET /api/models).
	Model string `json:"model,omitempty"`
	// Usage is the tokens of the turn's model calls, once it ended (nil
	// when the model reported none).
	Usage *Usage `json:"usage,omitempty"`
	// Recovering is true while the turn is not final and no live replica
	// runs it: its server died or handed it over, and another one is
	// taking it (set by GET /api/turns/{id}).
	Recovering bool       `json:"recovering,omitempty"`
	CreatedAt  time.Time  `json:"createdAt"`
	StartedAt  *time.Time `json:"startedAt,omitempty"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
}

// ToolCallRecord is the queryable row kept for every tool call of a turn.
type ToolCallRecord struct {
	ID         string          `json:"id"` // toolCallId, unique within its turn
	TurnID     string          `json:"turnId"`
	ParentID   string          `json:"parentToolCallId,omitempty"`
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	Status     string          `json:"status"` // a toolcallmarkup.Status
	Result     string          `json:"result,omitempty"`
	Error      string          `json:"error,omitempty"`
	StartedAt  time.Time       `json:"startedAt"`
	FinishedAt *time.Time      `json:"finishedAt,omitempty"`
}

// TodoStatus is the state of one item of the model's task list.
type TodoStatus string

// Todo statuses.
const (
	TodoPending    TodoStatus = "pending"
	TodoInProgress TodoStatus = "in_progress"
	TodoDone       TodoStatus = "done"
	// TodoCancelled and TodoInterrupted end the items a turn left
	// unfinished when it was cancelled or a crash interrupted it.
	TodoCancelled   TodoStatus = "cancelled"
	TodoInterrupted TodoStatus = "interrupted"
)

// Final reports whether s is an end state of a todo item.
func (s TodoStatus) Final() bool {
	return s == TodoDone || s == TodoCancelled || s == TodoInterrupted
}

// Todo is one item of the task list the model keeps during a turn.
type Todo struct {
	Text   string     `json:"text"`
	Status TodoStatus `json:"status"`
}

// DocumentHit is one ranked result of a knowledge-base search.
type DocumentHit struct {
	ID      string  `json:"id"`
	Source  string  `json:"source"` // file path or URL the document came from
	Title   string  `json:"title"`
	Snippet string  `json:"snippet"` // plain text around the match, no markup
	Rank    float64 `json:"rank"`
}
