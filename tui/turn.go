package tui

import (
	"context"
	"errors"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
)

// The messages of the client's requests.
type (
	historyMsg struct {
		convID string
		conv   client.ConversationPage
		err    error
		notice string // shown once the conversation is
		hit    *hitAt // a search hit to show, else the end
	}
	olderMsg struct {
		convID string
		conv   client.ConversationPage
		err    error
	}
	convsMsg struct {
		list  []toolmark.Conversation
		query string
		err   error
	}
	startedMsg struct {
		gen      int
		convID   string
		turnID   string
		model    string            // the id of the model that answers it
		text     string            // what was sent: back to the composer if it failed
		files    []toolmark.Upload // the files sent with it: attached again if it failed
		replaced bool              // the turn replaces the last one shown
		err      error
	}
	cancelDoneMsg struct{ err error }
)

// loadHistory fetches a conversation's latest messages.
func (m *model) loadHistory(id string) tea.Cmd {
	c, ctx := m.c, m.ctx
	return func() tea.Msg {
		conv, err := c.GetConversation(ctx, id)
		return historyMsg{convID: id, conv: conv, err: err}
	}
}

// loadOlder fetches the page of messages before the history.
func (m *model) loadOlder() tea.Cmd {
	c, ctx, id, before := m.c, m.ctx, m.chat.convID, m.chat.before
	m.chat.more = false // one request at a time
	return func() tea.Msg {
		conv, err := c.GetConversationBefore(ctx, id, before, 0)
		return olderMsg{convID: id, conv: conv, err: err}
	}
}

// send starts a turn asking text, in the open conversation or a new one.
func (m *model) send(text string) tea.Cmd {
	if m.chat.expanded {
		m.chat.toggleExpanded()
	}
	if m.chat.live != nil {
		m.chat.history = append(m.chat.history, m.chat.live)
	}
	m.notice = ""
	m.chat.clearHit()
	m.chat.live = &entry{user: text, acc: client.NewAccumulator(nil), running: true}
	gen := m.stream.newTurn()
	c, ctx, convID, modelID, files := m.c, m.ctx, m.chat.convID, m.modelID, m.takeAttached()
	m.chat.draw(true)
	return tea.Batch(m.spin.Tick, func() tea.Msg {
		conv, ti, err := startTurn(ctx, c, convID, toolmark.TurnInput{Content: text, Model: modelID, Attachments: uploadIDs(files)})
		return startedMsg{gen: gen, convID: conv, turnID: ti.Turn.ID, model: ti.Turn.Model, text: text, files: files, err: err}
	})
}

// replaceLast starts a turn in place of the last one shown (a retry, a
// regeneration, an edit), asking question; start makes the request with an
// idempotency key.
func (m *model) replaceLast(question string, start func(key string) (client.TurnInfo, error)) tea.Cmd {
	if n := len(m.chat.history); n > 0 && m.chat.live == nil {
		m.chat.history = m.chat.history[:n-1] // else the last turn is the live one, replaced below
	}
	m.chat.clearHit()
	m.chat.live = &entry{user: question, acc: client.NewAccumulator(nil), running: true, replaced: true}
	gen := m.stream.newTurn()
	convID := m.chat.convID
	m.chat.draw(true)
	key := newIdempotencyKey()
	return tea.Batch(m.spin.Tick, func() tea.Msg {
		ti, err := start(key)
		return startedMsg{gen: gen, convID: convID, turnID: ti.Turn.ID, model: ti.Turn.Model, replaced: true, err: err}
	})
}

// cancel asks the server to cancel a turn; quit waits for it.
func (m *model) cancel(turnID string) tea.Cmd {
	if turnID == "" {
		return nil
	}
	m.pending++
	c, ctx := m.c, m.ctx
	return func() tea.Msg {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_, err := c.CancelTurn(cctx, turnID)
		return cancelDoneMsg{err: err}
	}
}

// updateTurn handles the messages of requests and of the live turn.
func (m *model) updateTurn(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case historyMsg:
		return m, m.showHistory(msg)
	case olderMsg:
		if msg.err != nil || msg.convID != m.chat.convID {
			m.chat.more = msg.err != nil
			if msg.err != nil {
				m.notice = "Could not load earlier messages: " + errText(msg.err)
			}
			return m, nil
		}
		m.chat.more, m.chat.before = msg.conv.More, msg.conv.Before
		m.chat.prepend(entriesOf(msg.conv.Messages))
		return m, nil
	case convsMsg:
		if msg.err != nil {
			m.notice = "Could not list the conversations: " + errText(msg.err)
			return m, nil
		}
		m.picker = picker{convs: msg.list, query: msg.query}
		m.mode = modePicker
		return m, nil
	case startedMsg:
		return m, m.started(msg)
	case joined:
		_, cmd := m.updateTurn(msg.batch)
		_, cmd2 := m.updateTurn(msg.then)
		return m, tea.Batch(cmd, cmd2)
	case eventsMsg:
		if msg.gen != m.stream.gen || m.chat.live == nil {
			return m, nil
		}
		live := m.chat.live
		live.reconnecting = nil
		for _, ev := range msg.evs {
			if err := live.acc.Add(ev); err != nil {
				live.err = err
			}
		}
		return m, tea.Batch(m.chat.changed(), m.stream.next())
	case connMsg:
		if msg.gen != m.stream.gen || m.chat.live == nil {
			return m, nil
		}
		m.chat.live.reconnecting = nil
		if !msg.st.Connected {
			st := msg.st
			m.chat.live.reconnecting = &st
		}
		return m, tea.Batch(m.chat.changed(), m.stream.next())
	case streamEndMsg:
		if msg.gen != m.stream.gen || m.chat.live == nil {
			return m, nil
		}
		if msg.err != nil && !errors.Is(msg.err, context.Canceled) {
			m.chat.live.err = msg.err
		}
		settle := m.endLive()
		if m.chat.live.replaced && !m.chat.expanded {
			return m, tea.Batch(settle, m.loadHistory(m.chat.convID)) // with the versions of its question
		}
		return m, settle
	case cancelDoneMsg:
		m.pending--
		if msg.err != nil {
			m.notice = "Could not cancel: " + errText(msg.err)
		}
		if m.quitting && m.pending <= 0 {
			return m, tea.Quit
		}
		return m, nil
	case toolsMsg:
		if msg.err != nil {
			m.notice = errText(msg.err)
			return m, nil
		}
		m.tools, m.mode = msg.tools, modeTools
		return m, nil
	case noticeMsg:
		m.notice = msg.text
		if msg.err != nil {
			m.notice = errText(msg.err)
		}
		return m, nil
	case titleMsg:
		if msg.convID == m.chat.convID {
			m.chat.title = msg.title
			m.notice = "Renamed the conversation."
		}
		return m, nil
	case quitExpiredMsg:
		if !m.quitArmed.IsZero() && time.Since(m.quitArmed) >= quitWindow {
			m.quitArmed = time.Time{}
			m.notice = ""
		}
		return m, nil
	}
	return m, nil
}

// showHistory shows a conversation just loaded, and follows its answer if
// one is still being written.
func (m *model) showHistory(msg historyMsg) tea.Cmd {
	if msg.err != nil {
		m.notice = "Could not open the conversation: " + errText(msg.err)
		return nil
	}
	ch := m.chat
	if ch.expanded {
		ch.toggleExpanded()
	}
	m.stream.newTurn()
	ch.hit = nil // its turn goes with the history
	ch.convID, ch.title, ch.history, ch.live = msg.convID, msg.conv.Conversation.Title, entriesOf(msg.conv.Messages), nil
	ch.more, ch.before = msg.conv.More, msg.conv.Before
	m.mode, m.notice = modeChat, msg.notice
	if n := len(ch.history); n > 0 {
		if last := ch.history[n-1]; last.acc != nil && !last.acc.Status().Final() && last.turnID != "" {
			// An answer is still being written: follow it.
			ch.history = ch.history[:n-1]
			ch.live = last
			last.running = true
			ch.draw(true)
			return tea.Batch(m.stream.start(m.ctx, last.turnID, last.acc.Seq()), m.spin.Tick)
		}
	}
	ch.draw(true)
	if msg.hit != nil && !ch.showHit(msg.conv.Messages, *msg.hit) {
		m.notice = "The message found is no longer in this conversation."
	}
	return nil
}

// started follows a turn the server took, or shows why it did not.
func (m *model) started(msg startedMsg) tea.Cmd {
	if msg.gen != m.stream.gen || m.chat.live == nil {
		return nil
	}
	if msg.convID != "" {
		m.chat.convID = msg.convID
	}
	live := m.chat.live
	if msg.err != nil {
		live.running, live.err = false, msg.err
		m.giveBack(msg.files) // nothing is lost: the files stay attached
		if msg.text != "" && m.input.empty() {
			// The message waits in the composer.
			m.input.set(msg.text)
			m.chat.live = nil
			m.notice = errText(msg.err) + " — your message is back in the composer" + withFiles(msg.files) + "."
			m.chat.resize(m.width, m.bodyHeight())
			return m.followRefused(msg)
		}
		cmd := m.endLive()
		if len(msg.files) > 0 {
			m.notice = attachedLine(m.attached)
		}
		return cmd
	}
	live.turnID, live.model = msg.turnID, msg.model
	if m.chat.title == "" {
		m.chat.title = msg.text
	}
	return m.stream.start(m.ctx, msg.turnID, 0)
}

// endLive ends the live turn's display; the command brings its full
// rendering (chat.ended).
func (m *model) endLive() tea.Cmd {
	live := m.chat.live
	live.running, live.cancelling, live.reconnecting = false, false, nil
	if m.notice != "" && !m.quitting {
		m.notice = "" // "wait…", "cancelling…": the answer is over
	}
	if m.chat.expanded {
		// The snapshot stays as it was: say how the answer ended.
		switch end, _ := live.acc.End(); end.Status {
		case toolmark.TurnCancelled:
			m.notice = "The answer was cancelled — Ctrl-O returns to the live view."
		case toolmark.TurnCompleted:
			m.notice = "The answer is complete — Ctrl-O returns to the live view."
		default:
			m.notice = "The answer ended (" + string(end.Status) + ") — Ctrl-O returns to the live view."
		}
	}
	return m.chat.ended()
}
