package fanout

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/liveview"
	"github.com/toolmark/toolmark/markdown"
	"github.com/toolmark/toolmark/turnstate"
)

// TurnView is the live view of one turn that every rendering follower on
// this replica shares: the events are applied to it once, each change is
// rendered once, and each render frame is encoded once per pair of
// versions, so N followers in step cost one rendering and one encoding.
type TurnView struct {
	mu     sync.Mutex
	view   *liveview.View
	frames map[frameKey][]byte // encoded frames by the versions they go from and to
}

type frameKey struct{ from, to int64 }

// maxViewFrames bounds a view's cache of encoded frames.
const maxViewFrames = 64

// View returns the shared live view of turnID, made on first use with the
// default renderer. It lives as long as the hub keeps the turn (see Prune).
func (h *Hub) View(turnID string) *TurnView {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.turn(turnID)
	if t.view == nil {
		t.view = &TurnView{view: liveview.New(markdown.Default()), frames: map[frameKey][]byte{}}
	}
	return t.view
}

// StateSource gives a turn's state as the runner running it on this
// replica committed it (Hub.Open): a live view that starts late, or fell
// behind, is seeded from it instead of reading and replaying the log.
type StateSource interface {
	// CommittedState returns a copy of the turn's state as of a committed
	// event, its Seq: every event up to it is in the log (persist, then
	// publish, holds for a seeded view too). It may wait for a commit.
	CommittedState(ctx context.Context) (*turnstate.State, error)
}

// seed seeds v from the state of turnID when it runs on this replica, and
// reports whether it did.
func (h *Hub) seed(ctx context.Context, turnID string, v *liveview.View) bool {
	h.mu.Lock()
	var src StateSource
	if t, ok := h.turns[turnID]; ok && t.local {
		src = t.state
	}
	h.mu.Unlock()
	if src == nil {
		return false
	}
	st, err := src.CommittedState(ctx)
	if err != nil {
		return false // the job ended meanwhile: the log has it all
	}
	v.Seed(st)
	return true
}

// CatchUpFunc brings a view that is behind up to the event seq upTo (a
// follower that resumed after a cursor, on a view that never saw the events
// before it): it applies a snapshot and the events from the store.
type CatchUpFunc func(v *liveview.View, upTo int64) error

// Prime brings the view up to the event seq after at least, for a follower
// that resumes there.
func (tv *TurnView) Prime(after int64, catchUp CatchUpFunc) error {
	tv.mu.Lock()
	defer tv.mu.Unlock()
	if tv.view.Seq() >= after {
		return nil
	}
	return catchUp(tv.view, after)
}

// Render applies frames to the view (catching up first when it is behind
// them) and returns the update from the version since to the view's, and
// its encoded render frame, or a nil frame when nothing changed for a
// follower at since whose bubble read status.
func (tv *TurnView) Render(since int64, status string, frames []Frame, catchUp CatchUpFunc) ([]byte, liveview.Update, error) {
	tv.mu.Lock()
	defer tv.mu.Unlock()
	if len(frames) > 0 && frames[0].Event.Seq > tv.view.Seq()+1 && catchUp != nil {
		if err := catchUp(tv.view, frames[0].Event.Seq-1); err != nil {
			return nil, liveview.Update{}, err
		}
	}
	for _, f := range frames {
		if f.Event.Seq <= tv.view.Seq() && f.Event.Seq > 0 {
			continue
		}
		data, err := f.Payload()
		if err != nil {
			return nil, liveview.Update{}, err
		}
		if err := tv.view.Apply(f.Event, toolmark.Draft{Type: f.Event.Type, Data: data, Tag: f.Tag}); err != nil {
			return nil, liveview.Update{}, fmt.Errorf("applying event %d: %w", f.Event.Seq, err)
		}
	}
	u, err := tv.view.Update(since)
	if err != nil {
		return nil, u, err
	}
	if !u.Reset && len(u.Blocks) == 0 && len(u.Todos) == 0 && !u.Final && u.Status == status {
		return nil, u, nil
	}
	key := frameKey{since, u.Version}
	if b, ok := tv.frames[key]; ok {
		return b, u, nil
	}
	b, err := encodeRender(u)
	if err != nil {
		return nil, u, err
	}
	if len(tv.frames) >= maxViewFrames {
		clear(tv.frames)
	}
	tv.frames[key] = b
	return b, u, nil
}

// encodeRender writes a render frame: its id is the seq it reflects (a
// browser resumes from it with Last-Event-ID), its data the update as JSON
// with HTML left unescaped (it is a JSON string already).
func encodeRender(u liveview.Update) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("id: ")
	buf.WriteString(strconv.FormatInt(u.Seq, 10))
	buf.WriteString("\nevent: render\ndata: ")
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(u); err != nil {
		return nil, fmt.Errorf("encoding a render frame: %w", err)
	}
	// Encode ends the JSON with a newline: the frame's blank line follows.
	buf.WriteString("\n")
	return buf.Bytes(), nil
}
