package tui

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/toolmark/toolmark/client"
)

// The messages of a live turn's stream.
type (
	// eventsMsg holds the events that arrived since the model last read
	// the stream: a burst of events is applied at once and drawn once.
	eventsMsg struct {
		gen int
		evs []client.Event
	}
	connMsg struct {
		gen int
		st  client.ConnState
	}
	streamEndMsg struct {
		gen int
		err error
	}
)

// maxBatch bounds the events of one eventsMsg.
const maxBatch = 512

// stream follows the live turn's events: a goroutine reads them from the
// client into a channel, and the model reads the channel with a command
// (next), as Bubble Tea wants — nothing writes to the terminal from
// another goroutine. gen names the turn: messages of an older stream are
// ignored.
type stream struct {
	c      *client.Client
	gen    int
	events chan tea.Msg
	cancel context.CancelFunc
}

// start follows turnID from after seq, under a new generation.
func (s *stream) start(ctx context.Context, turnID string, after int64) tea.Cmd {
	s.stop()
	ctx, s.cancel = context.WithCancel(ctx)
	gen, c := s.gen, s.c
	ch := make(chan tea.Msg, 1024)
	s.events = ch
	go func() {
		defer close(ch)
		onConn := client.OnConnState(func(st client.ConnState) { ch <- connMsg{gen: gen, st: st} })
		for ev, err := range c.Events(ctx, turnID, after, onConn) {
			if err != nil {
				ch <- streamEndMsg{gen: gen, err: err}
				return
			}
			ch <- eventsMsg{gen: gen, evs: []client.Event{ev}}
		}
		ch <- streamEndMsg{gen: gen}
	}()
	return s.next()
}

// next waits for the stream's next message, and joins the events that
// arrive within a frame after it into one: the screen cannot show more
// often, and each message costs the model an update and a view.
func (s *stream) next() tea.Cmd {
	ch := s.events
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		msg, ok := <-ch
		if !ok {
			return nil
		}
		batch, isEvents := msg.(eventsMsg)
		if !isEvents {
			return msg
		}
		frame := time.NewTimer(frameInterval)
		defer frame.Stop()
		for len(batch.evs) < maxBatch {
			select {
			case more, ok := <-ch:
				if !ok {
					return batch
				}
				if m, ok := more.(eventsMsg); ok {
					batch.evs = append(batch.evs, m.evs...)
					if m.evs[len(m.evs)-1].Type.Terminal() {
						return batch // the end shows at once
					}
					continue
				}
				// Not an event: it follows the batch, in order.
				return joined{batch, more}
			case <-frame.C:
				return batch
			}
		}
		return batch
	}
}

// joined carries an event batch and the message that came right after it.
type joined struct {
	batch eventsMsg
	then  tea.Msg
}

// stop stops following.
func (s *stream) stop() {
	if s.cancel != nil {
		s.cancel()
		s.cancel = nil
	}
}

// newTurn starts a new generation: the old stream's messages are ignored.
func (s *stream) newTurn() int {
	s.stop()
	s.gen++
	s.events = nil
	return s.gen
}
