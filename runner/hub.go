package runner

import (
	"sync"
	"time"
)

// Hub tells followers of a turn that its event log has grown. It carries no
// events: a follower reads them from the store after the wake-up, so every
// event it sends was persisted first, and a hub fed by PostgreSQL
// notifications serves turns that run on other replicas too.
type Hub struct {
	mu    sync.Mutex
	turns map[string]*hubTurn
}

type hubTurn struct {
	seq     int64
	ch      chan struct{} // closed when seq grows
	touched time.Time
}

// NewHub returns an empty Hub.
func NewHub() *Hub { return &Hub{turns: make(map[string]*hubTurn)} }

// Publish records that the log of turnID holds events up to seq and wakes
// the followers waiting for less.
func (h *Hub) Publish(turnID string, seq int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.turn(turnID)
	if seq <= t.seq {
		return
	}
	t.seq = seq
	close(t.ch)
	t.ch = make(chan struct{})
}

// Wait returns a channel that is closed once the log of turnID holds an
// event after seq. It may be closed already.
func (h *Hub) Wait(turnID string, seq int64) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.turn(turnID)
	if t.seq > seq {
		return closed
	}
	return t.ch
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (h *Hub) turn(id string) *hubTurn {
	t, ok := h.turns[id]
	if !ok {
		t = &hubTurn{ch: make(chan struct{})}
		h.turns[id] = t
	}
	t.touched = time.Now()
	return t
}

// Prune forgets turns not published to or waited on for longer than age.
// A follower that waits on a forgotten turn wakes at its next keep-alive
// and reads the store again, so pruning loses nothing.
func (h *Hub) Prune(age time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	cut := time.Now().Add(-age)
	for id, t := range h.turns {
		if t.touched.Before(cut) {
			delete(h.turns, id)
		}
	}
}
