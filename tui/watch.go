package tui

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
)

// The open conversation is watched (client.WatchConversation): a turn
// started elsewhere — in the page, another terminal, through the API —
// makes the terminal read the conversation again, which shows the new
// question and follows its answer live (showHistory). A goroutine reads
// the watch stream into a channel and the model reads the channel with a
// command, as with the live turn's stream (stream.go).

// watchMsg says that turn turnID started in conversation convID.
type watchMsg struct {
	gen            int
	convID, turnID string
}

// convWatch is the watch of the open conversation; gen names it, and the
// messages of an older watch are ignored.
type convWatch struct {
	convID string
	gen    int
	cancel context.CancelFunc
	turns  chan watchMsg
}

// rewatch watches the open conversation when it changed since the last
// look (nothing once none is open).
func (m *model) rewatch() tea.Cmd {
	w, id := &m.watch, m.chat.convID
	if id == w.convID {
		return nil
	}
	if w.cancel != nil {
		w.cancel()
	}
	w.convID, w.cancel, w.turns = id, nil, nil
	w.gen++
	if id == "" {
		return nil
	}
	ctx, cancel := context.WithCancel(m.ctx)
	ch, gen, c := make(chan watchMsg, 1), w.gen, m.c
	w.cancel, w.turns = cancel, ch
	go func() {
		defer close(ch)
		_ = c.WatchConversation(ctx, id, func(turnID string) {
			select {
			case ch <- watchMsg{gen: gen, convID: id, turnID: turnID}:
			case <-ctx.Done():
			}
		})
	}()
	return w.next()
}

// next waits for the watch's next turn.
func (w *convWatch) next() tea.Cmd {
	ch := w.turns
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		msg, ok := <-ch
		if !ok {
			return nil
		}
		return msg
	}
}

// watched handles a turn that started in a watched conversation: one this
// terminal does not show yet is shown and followed, unless an answer is
// running here (that one is followed first; the next look at the
// conversation shows the other).
func (m *model) watched(msg watchMsg) tea.Cmd {
	if msg.gen != m.watch.gen {
		return nil
	}
	next := m.watch.next()
	if msg.convID != m.chat.convID || m.mode != modeChat || m.chat.running() || m.chat.shows(msg.turnID) {
		return next
	}
	return tea.Batch(next, m.loadHistory(msg.convID))
}

// shows reports whether the chat shows turn turnID.
func (c *chat) shows(turnID string) bool {
	if c.live != nil && c.live.turnID == turnID {
		return true
	}
	for _, e := range c.history {
		if e.turnID == turnID {
			return true
		}
	}
	return false
}

// followRefused follows the answer that made the server refuse a send
// (409: one is being written in the conversation, started elsewhere): the
// conversation is read again and its running answer followed, the
// message waiting in the composer.
func (m *model) followRefused(msg startedMsg) tea.Cmd {
	convID := m.chat.convID
	if msg.convID != "" {
		convID = msg.convID
	}
	if convID == "" || client.ErrorCode(msg.err) != toolmark.ECONFLICT {
		return nil
	}
	c, ctx := m.c, m.ctx
	notice := "An answer started elsewhere is being written: following it. Your message is back in the composer" + withFiles(msg.files) + "."
	return func() tea.Msg {
		conv, err := c.GetConversation(ctx, convID)
		return historyMsg{convID: convID, conv: conv, err: err, notice: notice}
	}
}
