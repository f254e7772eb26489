package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/markdown"
	"github.com/toolmark/toolmark/runner"
)

// Live rendering: a client that opens a turn's event stream with
// ?render=html also gets "render" frames — the answer rendered to HTML by
// markdown.Live, as blocks, while it streams:
//
//	event: render
//	data: {"seq":42,"count":7,"blocks":[{"i":6,"html":"<p>…</p>\n"}],"status":"Searching knowledge base for:\nresume"}
//
// A render frame has no id: line, so it never moves the client's
// Last-Event-ID. It follows the batch of events it reflects (or a later
// state). The first frame of a stream has "reset":true and every block;
// later ones only the blocks that changed; blocks at or past count are
// gone. The HTML of all blocks, in order, equals what GET
// /api/conversations/{id} returns as the message's html for the same
// content. status is the status bubble ("" for none), final is set once
// the turn has ended.
//
// One markdown.Live per turn serves every follower on this replica, and
// each frame is marshalled once per (from, to) pair of versions, so N
// followers in step cost one rendering and one encoding.

// renderIdle is how long a turn's renderer is kept after its last follower
// left, for the reload that usually follows.
const renderIdle = 30 * time.Second

// renderHub holds the live renderers of the turns being followed.
type renderHub struct {
	mu    sync.Mutex
	turns map[string]*turnRender
}

// turnRender is the shared live renderer of one turn.
type turnRender struct {
	mu     sync.Mutex
	id     string
	live   *markdown.Live
	users  int
	idle   *time.Timer
	frames map[frameKey][]byte // encoded frames by the versions they go from and to
}

type frameKey struct{ from, to int64 }

// maxFrames bounds a turn's cache of encoded frames.
const maxFrames = 64

// renderFollower is one stream's view of its turn's renderer.
type renderFollower struct {
	s       *Server
	t       toolmark.Turn
	tr      *turnRender
	version int64  // the version of the last frame sent; -1 before the first
	status  string // the status bubble of that frame
	final   bool   // the final frame was sent
}

// renderFollower returns the follower of t's live renderer when the stream
// asked for rendered HTML, nil when it did not, or an error for a render
// parameter it does not know.
func (s *Server) renderFollower(r *http.Request, t toolmark.Turn) (*renderFollower, error) {
	switch r.URL.Query().Get("render") {
	case "":
		return nil, nil
	case "html":
	default:
		return nil, toolmark.Errorf(toolmark.EINVALID, "render must be html")
	}
	return &renderFollower{s: s, t: t, tr: s.renders.open(t.ID), version: -1}, nil
}

func (h *renderHub) open(id string) *turnRender {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.turns == nil {
		h.turns = map[string]*turnRender{}
	}
	tr := h.turns[id]
	if tr == nil {
		tr = &turnRender{id: id, live: markdown.NewLive(), frames: map[frameKey][]byte{}}
		h.turns[id] = tr
	}
	tr.users++
	if tr.idle != nil {
		tr.idle.Stop()
		tr.idle = nil
	}
	return tr
}

func (h *renderHub) release(tr *turnRender, final bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	tr.users--
	if tr.users > 0 {
		return
	}
	if final {
		delete(h.turns, tr.id)
		return
	}
	tr.idle = time.AfterFunc(renderIdle, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if tr.users == 0 && h.turns[tr.id] == tr {
			delete(h.turns, tr.id)
		}
	})
}

// close lets go of the renderer; f may be nil.
func (f *renderFollower) close() {
	if f == nil {
		return
	}
	f.tr.mu.Lock()
	final := f.tr.live.State().Status().Final()
	f.tr.mu.Unlock()
	f.s.renders.release(f.tr, final)
}

// write writes the render frame that follows the events of frames, if
// anything changed; f
// may be nil. A rendering problem is logged and leaves the frame out: the
// events are what matters, and the page shows the stored answer at the end.
func (f *renderFollower) write(ctx context.Context, w io.Writer, frames []runner.Frame) error {
	if f == nil || len(frames) == 0 || f.final {
		return nil
	}
	evs := make([]toolmark.Event, len(frames))
	for i, fr := range frames {
		evs[i] = fr.Event
	}
	frame, u, err := f.tr.frame(ctx, f, evs)
	if err != nil {
		if ctx.Err() == nil {
			f.s.log.Warn("live rendering", "turn", f.t.ID, "err", err)
		}
		return nil
	}
	f.version, f.status, f.final = u.Version, u.Status, u.Final
	if frame == nil {
		return nil
	}
	_, err = w.Write(frame)
	return err
}

// frame applies evs (catching up from the store when the renderer is
// behind them) and returns the update from f's version to the renderer's
// and its encoded frame, or a nil frame when nothing changed for f.
func (tr *turnRender) frame(ctx context.Context, f *renderFollower, evs []toolmark.Event) ([]byte, markdown.Update, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if err := tr.catchUp(ctx, f, evs); err != nil {
		return nil, markdown.Update{}, err
	}
	for _, e := range evs {
		if err := tr.live.Apply(e); err != nil {
			return nil, markdown.Update{}, fmt.Errorf("applying event %d: %w", e.Seq, err)
		}
	}
	u, err := tr.live.Update(f.version)
	if err != nil {
		return nil, markdown.Update{}, err
	}
	if !u.Reset && len(u.Blocks) == 0 && !u.Final && u.Status == f.status {
		return nil, u, nil
	}
	key := frameKey{f.version, u.Version}
	if b, ok := tr.frames[key]; ok {
		return b, u, nil
	}
	data, err := json.Marshal(u)
	if err != nil {
		return nil, markdown.Update{}, err
	}
	b := make([]byte, 0, len(data)+len("event: render\ndata: \n\n"))
	b = append(b, "event: render\ndata: "...)
	b = append(append(b, data...), "\n\n"...)
	if len(tr.frames) >= maxFrames {
		clear(tr.frames)
	}
	tr.frames[key] = b
	return b, u, nil
}

// catchUp brings the renderer up to the event before evs when it is behind
// them: a follower that resumed after a cursor, on a renderer that has not
// seen the events before it.
func (tr *turnRender) catchUp(ctx context.Context, f *renderFollower, evs []toolmark.Event) error {
	first := evs[0]
	if first.Type == toolmark.EventSnapshot {
		return nil // the snapshot sets the state
	}
	if tr.live.Seq() >= first.Seq-1 {
		return nil
	}
	s := f.s
	snap, err := s.snapshot(ctx, f.t)
	if err != nil {
		return fmt.Errorf("catching up: %w", err)
	}
	if snap.Seq > tr.live.Seq() {
		if err := tr.live.Apply(snap); err != nil {
			return fmt.Errorf("catching up: %w", err)
		}
	}
	for tr.live.Seq() < first.Seq-1 {
		more, err := s.cfg.Store.EventsAfter(ctx, f.t.ID, tr.live.Seq(), eventsPage)
		if err != nil {
			return fmt.Errorf("catching up: %w", err)
		}
		if len(more) == 0 {
			return errors.New("catching up: the log ends before the stream's events")
		}
		for _, e := range more {
			if e.Seq >= first.Seq {
				return nil
			}
			if err := tr.live.Apply(e); err != nil {
				return fmt.Errorf("catching up: %w", err)
			}
		}
	}
	return nil
}
