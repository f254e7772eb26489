package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// ErrBusy is returned by a Conversation's Load, LoadOlder, Send and Resume
// while another of them runs.
var ErrBusy = errors.New("client: the conversation is busy with another call")

// Conversation owns the messages of one conversation and keeps them up to
// date while an answer streams: it loads them, sends a message (starting
// a turn), follows the turn's events — resuming by itself after a dropped
// connection, as Events does — and applies each one to the answer, the
// last assistant message. After every change it calls its OnChange
// function, which reads the messages with Messages: a chat screen redraws
// from them and never handles an event itself.
//
// One of Load, LoadOlder, Send and Resume runs at a time; another called
// meanwhile returns ErrBusy. OnChange runs on the goroutine of that call,
// never two at once and without any lock held, so it may call every
// method (Send and the others return ErrBusy there). Messages, Cancel
// and the getters may be called from any goroutine at any time.
type Conversation struct {
	c        *Client
	onChange func(*Conversation)

	mu      sync.Mutex
	busy    bool
	id      string
	conv    toolmark.Conversation
	msgs    []ConversationMessage
	more    bool
	before  int64
	running *toolmark.Turn // the turn queued or running, as far as we know
}

// ConversationMessage is a message of a Conversation: the message as the
// server stores it and, for the answer being written, as it stands now
// (Content, Status, Seq, ToolCalls and Todos so far, Usage and a failed
// turn's Error at its end; HTML only once loaded from the server), with
// its text and tool calls ready to show.
type ConversationMessage struct {
	Message
	// Text is the message as a reader sees it: the content without its
	// ToolCall tags.
	Text string
	// Calls are an answer's tool calls in the order they started, each
	// with its Name, Stage, Status, Args, Result or Error, and StatusText
	// (statustext.Line(c.StatusText, c.Markup) is the line to show).
	Calls []ToolCall
}

// NewConversation returns the conversation id of c, with no messages until
// Load; id "" stands for a new conversation, created by the first Send.
// onChange (may be nil) is called after every change of the messages.
func NewConversation(c *Client, id string, onChange func(*Conversation)) *Conversation {
	return &Conversation{c: c, id: id, onChange: onChange}
}

// ID returns the conversation's id ("" until a new conversation's first
// Send created it).
func (cv *Conversation) ID() string {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	return cv.id
}

// Info returns the conversation as the server last described it: its
// title, times and summary (zero before Load or the first Send).
func (cv *Conversation) Info() toolmark.Conversation {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	return cv.conv
}

// Messages returns the messages loaded, oldest first, the answer being
// written last: a copy, safe to keep and to read while the conversation
// changes. The slices inside the messages are shared: do not modify them.
func (cv *Conversation) Messages() []ConversationMessage {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	return slices.Clone(cv.msgs)
}

// More reports whether older messages come before those loaded
// (LoadOlder loads them).
func (cv *Conversation) More() bool {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	return cv.more
}

// Running returns the turn that is queued or running in the
// conversation, as far as Load or Send know: Resume follows one Load
// found.
func (cv *Conversation) Running() (toolmark.Turn, bool) {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	if cv.running == nil {
		return toolmark.Turn{}, false
	}
	return *cv.running, true
}

// acquire marks the conversation busy, or returns ErrBusy.
func (cv *Conversation) acquire() error {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	if cv.busy {
		return ErrBusy
	}
	cv.busy = true
	return nil
}

func (cv *Conversation) release() {
	cv.mu.Lock()
	cv.busy = false
	cv.mu.Unlock()
}

// changed calls OnChange.
func (cv *Conversation) changed() {
	if cv.onChange != nil {
		cv.onChange(cv)
	}
}

// Load loads the conversation's latest messages (the server's default
// page) in place of those held, and the turn running, if any.
func (cv *Conversation) Load(ctx context.Context) error {
	if err := cv.acquire(); err != nil {
		return err
	}
	defer cv.release()
	id := cv.ID()
	if id == "" {
		return errors.New("client: a new conversation has nothing to load")
	}
	page, err := cv.c.GetConversation(ctx, id)
	if err != nil {
		return err
	}
	msgs := make([]ConversationMessage, len(page.Messages))
	for i, m := range page.Messages {
		msgs[i] = conversationMessage(m)
	}
	cv.mu.Lock()
	cv.conv, cv.msgs, cv.more, cv.before = page.Conversation, msgs, page.More, page.Before
	cv.running = nil
	if t := page.ActiveTurn; t != nil && !t.Status.Final() {
		cv.running = t
	}
	cv.mu.Unlock()
	cv.changed()
	return nil
}

// LoadOlder loads the page of messages before those held, if there is
// one (More).
func (cv *Conversation) LoadOlder(ctx context.Context) error {
	if err := cv.acquire(); err != nil {
		return err
	}
	defer cv.release()
	cv.mu.Lock()
	id, more, before := cv.id, cv.more, cv.before
	cv.mu.Unlock()
	if !more {
		return nil
	}
	page, err := cv.c.GetConversationBefore(ctx, id, before, 0)
	if err != nil {
		return err
	}
	older := make([]ConversationMessage, len(page.Messages))
	for i, m := range page.Messages {
		older[i] = conversationMessage(m)
	}
	cv.mu.Lock()
	cv.msgs = append(older, cv.msgs...)
	cv.more, cv.before = page.More, page.Before
	cv.mu.Unlock()
	cv.changed()
	return nil
}

// conversationMessage is a stored message with its text and tool calls.
func conversationMessage(m Message) ConversationMessage {
	cm := ConversationMessage{Message: m, Text: m.Content}
	if m.Role != toolmark.RoleAssistant {
		return cm
	}
	cm.Text = toolcallmarkup.Text(m.Content)
	if acc, err := AccumulatorOf(m); err == nil {
		cm.Calls = acc.ToolCalls()
	}
	return cm
}

// Send sends text as a message — creating the conversation first when it
// is new —, adds it and the answer to come to the messages, and follows
// the answer until its turn ends, applying each event to it. It returns
// how the turn ended (completed, failed with its error, cancelled…) and
// an error only when the message could not be sent or the answer could
// not be followed.
//
// A send that fails on the network is retried with the same idempotency
// key, so it never starts two turns. Ending ctx stops following, not the
// turn: Load and Resume pick it up later; Cancel cancels it.
func (cv *Conversation) Send(ctx context.Context, text string) (toolmark.TurnEndData, error) {
	if err := cv.acquire(); err != nil {
		return toolmark.TurnEndData{}, err
	}
	defer cv.release()
	id := cv.ID()
	if id == "" {
		conv, err := cv.c.CreateConversation(ctx, "") // the server titles it from the first question
		if err != nil {
			return toolmark.TurnEndData{}, fmt.Errorf("creating the conversation: %w", err)
		}
		cv.mu.Lock()
		cv.id, cv.conv = conv.ID, conv
		cv.mu.Unlock()
		id = conv.ID
	}
	ti, err := cv.postTurn(ctx, id, text)
	if err != nil {
		return toolmark.TurnEndData{}, err
	}
	t := ti.Turn
	now := time.Now()
	cv.mu.Lock()
	cv.msgs = append(cv.msgs,
		ConversationMessage{Text: text, Message: Message{Message: toolmark.Message{ID: t.UserMessageID, ConversationID: id,
			TurnID: t.ID, Role: toolmark.RoleUser, Content: text, Status: toolmark.MessageComplete, CreatedAt: now, UpdatedAt: now}}},
		ConversationMessage{Message: Message{Message: toolmark.Message{ID: t.AssistantMessageID, ConversationID: id,
			TurnID: t.ID, Role: toolmark.RoleAssistant, Status: toolmark.MessageStreaming, CreatedAt: now, UpdatedAt: now}}})
	cv.running = &t
	cv.mu.Unlock()
	cv.changed()
	end, err := cv.follow(ctx, t, NewAccumulator(nil), 0)
	if err == nil && cv.Info().Title == "" {
		cv.refreshInfo(ctx, id) // the server titled the conversation from the question
	}
	return end, err
}

// refreshInfo reloads the conversation's title and times.
func (cv *Conversation) refreshInfo(ctx context.Context, id string) {
	page, err := cv.c.GetConversationBefore(ctx, id, 0, 1)
	if err != nil {
		return
	}
	cv.mu.Lock()
	changed := page.Conversation.Title != cv.conv.Title
	cv.conv = page.Conversation
	cv.mu.Unlock()
	if changed {
		cv.changed()
	}
}

// postTurn starts a turn, retrying a network failure with the same
// idempotency key.
func (cv *Conversation) postTurn(ctx context.Context, id, text string) (TurnInfo, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	key := hex.EncodeToString(b[:])
	var (
		ti  TurnInfo
		err error
	)
	for attempt := range 3 {
		ti, err = cv.c.PostTurn(ctx, id, text, key)
		if err == nil || errors.As(err, new(*APIError)) || ctx.Err() != nil {
			break
		}
		if sleep(ctx, time.Duration(attempt+1)*500*time.Millisecond) != nil {
			break
		}
	}
	if err != nil {
		return ti, fmt.Errorf("sending the message: %w", err)
	}
	return ti, nil
}

// Resume follows the turn Load found running (see Running) from where its
// answer stood, applying each event to it, until the turn ends, and
// returns how it ended. With no turn running it returns at once, with a
// zero TurnEndData.
func (cv *Conversation) Resume(ctx context.Context) (toolmark.TurnEndData, error) {
	if err := cv.acquire(); err != nil {
		return toolmark.TurnEndData{}, err
	}
	defer cv.release()
	cv.mu.Lock()
	t := cv.running
	var answer Message
	if t != nil {
		answer = cv.answerLocked(*t).Message
	}
	cv.mu.Unlock()
	if t == nil {
		return toolmark.TurnEndData{}, nil
	}
	acc, err := AccumulatorOf(answer)
	if err != nil {
		return toolmark.TurnEndData{}, err
	}
	return cv.follow(ctx, *t, acc, acc.Seq())
}

// answerLocked returns the answer of turn t, adding it when it is not
// there yet (a turn still queued has written nothing).
func (cv *Conversation) answerLocked(t toolmark.Turn) *ConversationMessage {
	for i := len(cv.msgs) - 1; i >= 0; i-- {
		if m := &cv.msgs[i]; m.Role == toolmark.RoleAssistant && (m.TurnID == t.ID || m.ID == t.AssistantMessageID) {
			return m
		}
	}
	cv.msgs = append(cv.msgs, ConversationMessage{Message: Message{Message: toolmark.Message{ID: t.AssistantMessageID,
		ConversationID: t.ConversationID, TurnID: t.ID, Role: toolmark.RoleAssistant, Status: toolmark.MessageStreaming}}})
	return &cv.msgs[len(cv.msgs)-1]
}

// follow applies the events of turn t after seq after to acc and to the
// turn's answer, calling OnChange after each.
func (cv *Conversation) follow(ctx context.Context, t toolmark.Turn, acc *Accumulator, after int64) (toolmark.TurnEndData, error) {
	for ev, err := range cv.c.Events(ctx, t.ID, after) {
		if err != nil {
			return toolmark.TurnEndData{}, fmt.Errorf("following the answer: %w", err)
		}
		if err := acc.Add(ev); err != nil {
			return toolmark.TurnEndData{}, fmt.Errorf("following the answer: %w", err)
		}
		cv.apply(t, acc)
		cv.changed()
	}
	end, ok := acc.End()
	if !ok {
		end.Status = acc.Status() // a snapshot of a finished turn ended the stream
	}
	cv.mu.Lock()
	if cv.running != nil && cv.running.ID == t.ID {
		cv.running = nil
	}
	cv.mu.Unlock()
	return end, nil
}

// apply writes the state of acc into the answer of turn t: new slices
// every time, so a copy Messages returned earlier never changes.
func (cv *Conversation) apply(t toolmark.Turn, acc *Accumulator) {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	m := cv.answerLocked(t)
	m.Content, m.Seq, m.UpdatedAt = acc.Content(), acc.Seq(), time.Now()
	m.Status = toolmark.MessageStreaming
	if st := acc.Status(); st.Final() {
		m.Status = st.MessageStatus()
		if end, ok := acc.End(); ok {
			if end.Usage != nil {
				m.Usage = end.Usage
			}
			if st == toolmark.TurnFailed {
				m.Error = end.Error
			}
		}
	}
	m.Text = acc.Text()
	m.Calls = acc.ToolCalls()
	m.ToolCalls = acc.st.Records()
	m.Todos = acc.Todos()
	if cv.running != nil && cv.running.ID == t.ID {
		rt := *cv.running
		rt.Status, rt.LastSeq = acc.Status(), acc.Seq()
		cv.running = &rt
	}
}

// Cancel asks the server to cancel the turn running, if one is; the
// answer's end then arrives as an event, and Send or Resume return.
func (cv *Conversation) Cancel(ctx context.Context) error {
	t, ok := cv.Running()
	if !ok {
		return nil
	}
	_, err := cv.c.CancelTurn(ctx, t.ID)
	return err
}
