// Package fanout hands a turn's committed events to its followers on this
// replica, from memory: one Hub per replica holds, per turn, the tail of
// committed frames and the turn's live view (package liveview) that
// rendering followers share — one registry, one lifetime.
//
// # Data flow
//
//	runner: commit → Hub.Publish(frames: the events, typed once)
//	        → followers of events write each frame's SSE bytes, encoded once
//	          for all of them (Frame.SSE)
//	        → rendering followers apply the typed payloads to the turn's View
//	          (nothing decoded) and write its coalesced render frames
package fanout

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Hub hands committed events to the followers of turns from memory.
//
// For a turn that runs on this replica the runner publishes each batch's
// frames once it is committed (persist, then publish), and followers read
// them from a bounded tail: no follower reads the store while it keeps up.
// For a turn that runs on another replica, the hub learns of new events from
// PostgreSQL notifications and reads them from the store once per
// notification, for all of this replica's followers of the turn. A follower
// whose cursor is older than the tail (a resume from long ago, or one that
// fell behind) reads the store itself, then follows the tail. A slow
// follower never slows the turn or the other followers: nobody waits for
// it.
type Hub struct {
	mu       sync.Mutex
	turns    map[string]*hubTurn
	maxBytes int
	log      Log
	// tailSize is the usual number of frames of a turn (a moving average of
	// the finished turns' tails): a new tail is made that large at once,
	// instead of growing by doubling, which allocated twice its frames.
	tailSize int

	dirty   []*Direct // parked followers with frames to write (direct.go)
	writing bool      // the writer of dirty runs

	directWrites, handedBack atomic.Int64 // DirectStats
}

// maxTailSize bounds the frames a new tail is made with room for.
const maxTailSize = 1024

type hubTurn struct {
	frames    []Frame // the tail, oldest first, seqs without gaps
	bytes     int
	last      int64 // seq of the newest frame
	final     bool  // the terminal event is in the tail
	local     bool  // fed by this replica's runner
	announced int64 // remote: the newest seq a notification announced
	loading   bool
	followers int
	wake      chan struct{} // closed when the tail grows
	touched   time.Time
	polled    time.Time   // the last PollIdle that read the store
	view      *TurnView   // the live view of rendering followers, made on first use
	state     StateSource // local: the turn's state as its runner commits it
	direct    []*Direct   // parked followers, written by the hub (direct.go)
}

// DefaultTailBytes bounds the frames a Hub keeps per turn.
const DefaultTailBytes = 256 << 10

// NewHub returns an empty Hub that reads what its memory does not hold —
// old cursors, turns running on other replicas, snapshots — from log.
func NewHub(log Log) *Hub {
	return &Hub{turns: make(map[string]*hubTurn), maxBytes: DefaultTailBytes, log: log}
}

func (h *Hub) turn(id string) *hubTurn {
	t, ok := h.turns[id]
	if !ok {
		t = &hubTurn{wake: make(chan struct{})}
		h.turns[id] = t
	}
	t.touched = time.Now()
	return t
}

// Open records that turnID runs on this replica from now on, and publishes
// the frames of it committed already: its frames come from Publish, and
// notifications about it are ignored; a live view that catches up is
// seeded from state (when not nil). The runner opens a turn when its job
// starts and closes it when the job ends.
func (h *Hub) Open(turnID string, state StateSource, committed []Frame) {
	h.mu.Lock()
	t := h.turn(turnID)
	t.local, t.state = true, state
	h.append(t, committed)
	h.mu.Unlock()
}

// Close records that turnID no longer runs on this replica (its job ended:
// the turn ended, or another replica continues it): its followers here are
// fed from the store and notifications.
func (h *Hub) Close(turnID string) {
	h.mu.Lock()
	t := h.turn(turnID)
	t.local, t.state = false, nil
	// Parked followers go back to their goroutines, which follow the
	// store's notifications.
	for len(t.direct) > 0 {
		h.detach(t.direct[0])
	}
	h.mu.Unlock()
}

// Local reports whether turnID runs on this replica: whether it was opened
// (Open) and not closed since.
func (h *Hub) Local(turnID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, ok := h.turns[turnID]
	return ok && t.local
}

// Publish appends committed frames of turnID to its tail and wakes its
// followers. Frames must follow the tail without a gap; an older one is
// skipped, and a gap drops the tail (followers then read the store).
func (h *Hub) Publish(turnID string, frames []Frame) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.append(h.turn(turnID), frames)
}

// PublishAll publishes the frames of several turns, one commit's, at once:
// frames[i] are those of turnIDs[i].
func (h *Hub) PublishAll(turnIDs []string, frames [][]Frame) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, id := range turnIDs {
		h.append(h.turn(id), frames[i])
	}
}

func (h *Hub) append(t *hubTurn, frames []Frame) {
	grew := false
	for _, f := range frames {
		seq := f.Event.Seq
		if seq <= t.last && len(t.frames) > 0 {
			continue
		}
		if len(t.frames) > 0 && seq != t.last+1 {
			t.frames, t.bytes = nil, 0
		}
		if t.frames == nil {
			t.frames = make([]Frame, 0, max(len(frames), h.tailSize))
		}
		t.frames = append(t.frames, f)
		t.bytes += f.size()
		t.last = seq
		if f.Event.Type.Terminal() && !t.final {
			t.final = true
			h.tailSize = min((7*h.tailSize+len(t.frames)+7)/8, maxTailSize)
		}
		grew = true
	}
	// The frames trimmed are not cleared: a follower, or the hub's writer,
	// may still hold them (After's Frames, used after the lock is
	// released). They go with the backing array, once append has moved
	// the tail to a new one.
	for t.bytes > h.maxBytes && len(t.frames) > 1 {
		t.bytes -= t.frames[0].size()
		t.frames = t.frames[1:]
	}
	if grew {
		close(t.wake)
		t.wake = make(chan struct{})
		if len(t.direct) > 0 {
			h.queueDirect(t)
		}
	}
}

// Seed offers frames a follower read from the store, so that the tail of
// a turn known to no one here starts where that follower is.
func (h *Hub) Seed(turnID string, frames []Frame) {
	if len(frames) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.turn(turnID)
	if len(t.frames) == 0 || frames[len(frames)-1].Event.Seq > t.last && frames[0].Event.Seq <= t.last+1 {
		h.append(t, frames)
	}
}

// Join registers a follower of turnID; call the returned function when it
// leaves. Follow joins for its follower.
func (h *Hub) Join(turnID string) (leave func()) {
	h.mu.Lock()
	h.turn(turnID).followers++
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		if t, ok := h.turns[turnID]; ok {
			t.followers--
			t.touched = time.Now()
		}
		h.mu.Unlock()
	}
}

// Followed returns the turns running on other replicas that followers of
// this replica follow: what a replica that hears no notification polls.
func (h *Hub) Followed() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var ids []string
	for id, t := range h.turns {
		if !t.local && !t.final && t.followers > 0 {
			ids = append(ids, id)
		}
	}
	return ids
}

// Tail is the answer of After.
type Tail struct {
	Frames []Frame         // the frames after the cursor (not to be modified)
	Wake   <-chan struct{} // closed when more arrive
	// Store is true when the tail does not reach back to the cursor: read
	// the store.
	Store bool
	// Done is true when the turn's terminal event is at or before the
	// cursor: nothing more will come.
	Done bool
}

// After returns the frames of turnID after the cursor.
func (h *Hub) After(turnID string, cursor int64) Tail {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.turn(turnID).after(cursor)
}

// after returns the frames after the cursor (the hub's mu held).
func (t *hubTurn) after(cursor int64) Tail {
	out := Tail{Wake: t.wake}
	if len(t.frames) == 0 {
		out.Store = !t.local || cursor > 0
		return out
	}
	first := t.frames[0].Event.Seq
	switch {
	case cursor < first-1:
		out.Store = true
	case cursor >= t.last:
		out.Done = t.final
	default:
		out.Frames = t.frames[cursor-first+1:]
	}
	return out
}

// Notify records that turnID's log holds events up to seq (a notification
// from the replica that runs it) and, if this replica follows the turn,
// reads them from the store once for all its followers.
func (h *Hub) Notify(turnID string, seq int64) {
	h.mu.Lock()
	t, ok := h.turns[turnID]
	if !ok || t.local || t.followers == 0 || seq <= t.last {
		h.mu.Unlock()
		return
	}
	t.announced = max(t.announced, seq)
	h.mu.Unlock()
	h.fetch(turnID)
}

// Poll makes the hub read a remote turn's store now, for followers that
// heard nothing for a while (a notification can be lost while the listening
// connection reconnects).
func (h *Hub) Poll(turnID string) {
	h.mu.Lock()
	t, ok := h.turns[turnID]
	if ok && !t.local {
		t.announced = max(t.announced, t.last+1)
	}
	h.mu.Unlock()
	if ok {
		h.fetch(turnID)
	}
}

// idlePollGap is how often PollIdle reads a remote turn's store at most.
const idlePollGap = 10 * time.Second

// PollIdle is Poll for a follower that heard nothing for a while (its
// keep-alive): at most once every idlePollGap per turn, however many
// followers ask, so that idle followers of a turn running elsewhere cost
// the database next to nothing.
func (h *Hub) PollIdle(turnID string) {
	h.mu.Lock()
	t, ok := h.turns[turnID]
	if !ok || t.local || time.Since(t.polled) < idlePollGap {
		h.mu.Unlock()
		return
	}
	t.polled = time.Now()
	h.mu.Unlock()
	h.Poll(turnID)
}

// fetch reads what was announced for a remote turn, one reader at a time.
func (h *Hub) fetch(turnID string) {
	h.mu.Lock()
	t := h.turns[turnID]
	if t == nil || t.loading || h.log == nil || len(t.frames) == 0 {
		// An empty tail is seeded by the first follower's own read.
		if t != nil && len(t.frames) == 0 && t.announced > 0 {
			close(t.wake)
			t.wake = make(chan struct{})
		}
		h.mu.Unlock()
		return
	}
	t.loading = true
	h.mu.Unlock()
	go func() {
		for {
			h.mu.Lock()
			after, want := t.last, t.announced
			if after >= want {
				t.loading = false
				h.mu.Unlock()
				return
			}
			h.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			evs, err := h.log.EventsAfter(ctx, turnID, after, 1000)
			cancel()
			frames := make([]Frame, len(evs))
			for i, e := range evs {
				frames[i] = NewFrame(e, nil)
			}
			h.mu.Lock()
			h.append(t, frames)
			if err != nil || len(evs) == 0 {
				t.loading = false
				// Wake the followers anyway: they read the store themselves.
				close(t.wake)
				t.wake = make(chan struct{})
				h.mu.Unlock()
				return
			}
			h.mu.Unlock()
		}
	}()
}

// Prune forgets turns that nobody follows and that were not touched for
// longer than age (a finished local turn, a remote turn whose followers
// left). A follower of a forgotten turn reads the store.
func (h *Hub) Prune(age time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	cut := time.Now().Add(-age)
	for id, t := range h.turns {
		if t.followers <= 0 && t.touched.Before(cut) && (!t.local || t.final) {
			delete(h.turns, id)
		}
	}
}
