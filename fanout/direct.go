package fanout

import "sync"

// Parked followers: a follower that has caught up with a local turn's tail
// can park instead of waiting on the tail's wake channel. The hub then
// writes its frames itself after each publish, from one goroutine for
// every parked follower of every turn, without waking the follower's
// goroutine: per commit, one write a follower and no goroutine woken a
// follower. The write must not block (DirectWriter): a follower whose
// connection cannot take a commit's frames at once is handed back to its
// own goroutine with the rest, and that goroutine waits for the socket,
// so a slow client never holds up the others.
//
//	runner: commit → Hub.Publish → the turn's parked followers queued
//	        → the hub's writer: DirectWriter.TryWrite(frames after the cursor)
//	        → detached, its goroutine woken, only when a write fell short,
//	          failed, carried the terminal event, or the turn left this replica

// DirectWriter writes a parked follower's frames without blocking.
type DirectWriter interface {
	// TryWrite writes frames to the follower's connection without waiting
	// for it. It reports false when the connection took only part of them:
	// the follower's goroutine writes the rest once woken. An error ends
	// the follower.
	TryWrite(frames []Frame) (complete bool, err error)
}

// Direct is a follower that can park with the hub (Hub.Park); it is owned
// by its goroutine while not parked.
type Direct struct {
	w      DirectWriter
	onWake func() // called when the hub hands the follower back, under its lock

	mu     sync.Mutex // held by the hub's writer while it writes
	cursor int64      // the seq of the last frame written
	err    error      // the error of the write that ended it

	// Guarded by the hub's mu.
	t      *hubTurn // the turn it is parked on; nil when not parked
	queued bool     // in Hub.dirty
}

// NewDirect returns a follower whose frames w writes while it is parked.
// The hub calls onWake when it hands the follower back to be taken on
// again (a write fell short or failed, the turn ended or left this
// replica, the tail has a gap): whoever owns the follower then calls
// Unpark. onWake must not be nil; the hub calls it under its lock, so it
// must neither block nor call the hub. A follower whose goroutine let go
// while parked starts one there.
func NewDirect(w DirectWriter, onWake func()) *Direct {
	return &Direct{w: w, onWake: onWake}
}

// DirectStats counts the hub's writes to parked followers.
type DirectStats struct {
	Writes     int64 // writes of one commit's frames to a parked follower
	HandedBack int64 // followers handed back because their socket was full
}

// DirectStats returns the counts since the hub was made.
func (h *Hub) DirectStats() DirectStats {
	return DirectStats{Writes: h.directWrites.Load(), HandedBack: h.handedBack.Load()}
}

// Park parks d on turnID's tail at cursor, if the turn runs on this
// replica, has not ended and its tail ends at the cursor; it reports
// whether it did. From then on the hub writes the turn's frames to d until
// Unpark.
func (h *Hub) Park(turnID string, d *Direct, cursor int64) bool {
	d.mu.Lock()
	d.cursor, d.err = cursor, nil
	d.mu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	t, ok := h.turns[turnID]
	if !ok || !t.local || t.final || len(t.frames) == 0 || t.last != cursor || d.t != nil {
		return false
	}
	d.t = t
	t.direct = append(t.direct, d)
	return true
}

// Unpark hands d back to its goroutine, once no write of the hub's is under
// way, and returns the seq of the last frame written to it and the error
// that ended it, if one did. It may be called more than once.
func (h *Hub) Unpark(d *Direct) (cursor int64, err error) {
	h.mu.Lock()
	h.detach(d)
	h.mu.Unlock()
	d.mu.Lock()
	cursor, err = d.cursor, d.err
	d.mu.Unlock()
	return cursor, err
}

// detach removes d from its turn and hands it back (h.mu held).
func (h *Hub) detach(d *Direct) {
	t := d.t
	if t == nil {
		return
	}
	d.t = nil
	for i, o := range t.direct {
		if o == d {
			t.direct[i] = t.direct[len(t.direct)-1]
			t.direct[len(t.direct)-1] = nil
			t.direct = t.direct[:len(t.direct)-1]
			break
		}
	}
	d.onWake()
}

// queueDirect queues t's parked followers for the writer, and starts it if
// it is not running (h.mu held).
func (h *Hub) queueDirect(t *hubTurn) {
	for _, d := range t.direct {
		if !d.queued {
			d.queued = true
			h.dirty = append(h.dirty, d)
		}
	}
	if len(h.dirty) > 0 && !h.writing {
		h.writing = true
		go h.writeDirect()
	}
}

// writeDirect writes the queued followers' frames until none is queued.
func (h *Hub) writeDirect() {
	var batch []*Direct
	for {
		h.mu.Lock()
		batch, h.dirty = h.dirty, batch[:0]
		if len(batch) == 0 {
			h.writing = false
			h.mu.Unlock()
			return
		}
		for _, d := range batch {
			d.queued = false
		}
		h.mu.Unlock()
		for i, d := range batch {
			h.writeOne(d)
			batch[i] = nil
		}
	}
}

// writeOne writes the frames after d's cursor, and detaches d when the
// write fell short or failed, when it carried the terminal event, or when
// the tail no longer reaches back to the cursor.
func (h *Hub) writeOne(d *Direct) {
	d.mu.Lock()
	defer d.mu.Unlock()
	h.mu.Lock()
	t := d.t
	if t == nil {
		h.mu.Unlock()
		return
	}
	tail := t.after(d.cursor)
	if tail.Store {
		h.detach(d)
	}
	h.mu.Unlock()
	frames := tail.Frames
	if len(frames) == 0 {
		return
	}
	end := false
	for i, f := range frames {
		if f.Event.Type.Terminal() {
			frames, end = frames[:i+1], true
			break
		}
	}
	complete, err := d.w.TryWrite(frames)
	d.cursor, d.err = frames[len(frames)-1].Event.Seq, err
	h.directWrites.Add(1)
	if !complete && err == nil {
		h.handedBack.Add(1)
	}
	if !complete || err != nil || end {
		h.mu.Lock()
		h.detach(d)
		h.mu.Unlock()
	}
}
