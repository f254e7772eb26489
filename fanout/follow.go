package fanout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/liveview"
)

// Log is the log of a turn's committed events, read where the hub's memory
// does not reach: a cursor older than a turn's tail, a turn this replica
// knows nothing of, a turn running on another replica. The runner
// implements it over the store. It is everything a follower of a turn reads
// besides the hub: every protocol's stream, and Runner.Wait, follow a turn
// through Hub.Follow, and so through it.
type Log interface {
	// EventsAfter returns up to limit committed events of turnID after the
	// seq after, in seq order; an error matching toolmark.ErrCursorPruned
	// when the events after it were pruned.
	EventsAfter(ctx context.Context, turnID string, after int64, limit int) ([]toolmark.Event, error)
	// Snapshot returns the whole state of turnID's answer as of its newest
	// committed event, whose seq is its Seq: read in one transaction, so
	// its content, tool calls, todos and status are all of that seq.
	Snapshot(ctx context.Context, turnID string) (toolmark.SnapshotData, error)
}

// logPage is how many events a follower reads from the log at a time.
const logPage = 500

// Follower is what Follow hands a turn's frames to.
type Follower struct {
	// Frames takes a batch of frames, in seq order: the turn's committed
	// frames, or a snapshot event (its seq that of the snapshot) where the
	// log no longer holds the cursor.
	Frames func([]Frame) error
	// Idle, when not nil, is called when nothing arrived for Heartbeat.
	Idle      func() error
	Heartbeat time.Duration
	// Park, when not nil, is offered a follower that has caught up with a
	// local turn's tail, instead of waiting: it reports whether it parked
	// the follower with the hub and, if so, returns the cursor the hub
	// wrote up to once it handed the follower back.
	Park func(cursor int64) (int64, bool, error)
	// Closing, when closed, ends Follow with ErrClosed.
	Closing <-chan struct{}
}

// ErrLogRead is the error of Follow when reading the log failed (it wraps
// the cause): the follower reconnects with its cursor.
var ErrLogRead = errors.New("reading the turn's log")

// ErrClosed ends Follow when its follower's Closing channel is closed (the
// server closes its streams).
var ErrClosed = errors.New("the server is shutting down")

// Follow hands f the committed frames of t after the cursor, a batch at a
// time and in seq order, until the batch holding the terminal event, ctx
// ends, f.Closing is closed (ErrClosed), or f.Frames fails. When the log no
// longer holds the cursor, the first batch is a snapshot event. It returns
// nil after the terminal event, or when the turn is over and nothing
// follows the cursor.
//
// Frames come from the turn's tail in memory; the log is read only for a
// cursor older than the tail (a late resume, a follower that fell behind)
// and for turns this replica knows nothing of.
func (h *Hub) Follow(ctx context.Context, t toolmark.Turn, after int64, f Follower) error {
	heartbeat := time.NewTicker(max(f.Heartbeat, time.Millisecond))
	defer heartbeat.Stop()
	leave := h.Join(t.ID)
	defer leave()
	cursor, snapshots := after, 0
	for {
		tail := h.After(t.ID, cursor)
		if tail.Store {
			frames, err := h.read(ctx, t, cursor, snapshots == 0)
			if err != nil {
				return err
			}
			if len(frames) > 0 && frames[0].Event.Type == toolmark.EventSnapshot {
				snapshots++
				if err := f.Frames(frames); err != nil {
					return err
				}
				if d, ok := frames[0].Data.(toolmark.SnapshotData); ok && d.Status.Final() {
					return nil // the snapshot holds the turn's end
				}
				cursor = frames[0].Event.Seq
				continue
			}
			if len(frames) > 0 {
				if done, err := deliver(frames, f.Frames); err != nil || done {
					return err
				}
				cursor = frames[len(frames)-1].Event.Seq
				if len(frames) == logPage {
					continue
				}
				// Wait for what comes next: the hub wakes the follower
				// when it knows of newer events.
				if tail = h.After(t.ID, cursor); len(tail.Frames) > 0 {
					continue
				}
			} else if over, err := h.over(ctx, t.ID, cursor); err != nil || over {
				return err
			}
		} else if len(tail.Frames) > 0 {
			if done, err := deliver(tail.Frames, f.Frames); err != nil || done {
				return err
			}
			cursor = tail.Frames[len(tail.Frames)-1].Event.Seq
			continue
		} else if tail.Done {
			return nil
		}
		if f.Park != nil && !tail.Store {
			c, parked, err := f.Park(cursor)
			if err != nil {
				return err
			}
			if parked {
				cursor = c
				continue
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-f.Closing:
			return ErrClosed
		case <-tail.Wake:
		case <-heartbeat.C:
			if f.Idle != nil {
				if err := f.Idle(); err != nil {
					return err
				}
			}
			h.PollIdle(t.ID) // a notification may have been lost (at most one read per turn every idlePollGap)
		}
	}
}

// read reads the frames of t after the cursor from the log and offers them
// to the hub's tail; where the log no longer holds the cursor it returns
// the turn's snapshot instead, when snapshot allows.
func (h *Hub) read(ctx context.Context, t toolmark.Turn, cursor int64, snapshot bool) ([]Frame, error) {
	evs, err := h.log.EventsAfter(ctx, t.ID, cursor, logPage)
	if errors.Is(err, toolmark.ErrCursorPruned) && snapshot {
		snap, err := h.snapshot(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("%w: building a snapshot: %w", ErrLogRead, err)
		}
		return []Frame{snap}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: events after %d: %w", ErrLogRead, cursor, err)
	}
	frames := make([]Frame, len(evs))
	for i, e := range evs {
		frames[i] = NewFrame(e, nil)
	}
	h.Seed(t.ID, frames)
	return frames, nil
}

// over reports whether the turn is over with nothing after the cursor.
func (h *Hub) over(ctx context.Context, turnID string, cursor int64) (bool, error) {
	snap, err := h.log.Snapshot(ctx, turnID)
	if err != nil {
		return false, nil // the follower waits, and reads again
	}
	return snap.Status.Final() && snap.Seq <= cursor, nil
}

// snapshot is the event that stands for a turn's log up to its newest
// event: the message content with the turn's tool calls, todos and status.
func (h *Hub) snapshot(ctx context.Context, t toolmark.Turn) (Frame, error) {
	d, err := h.log.Snapshot(ctx, t.ID)
	if err != nil {
		return Frame{}, err
	}
	if d.ToolCalls == nil {
		d.ToolCalls = []toolmark.ToolCallRecord{}
	}
	if d.Todos == nil {
		d.Todos = []toolmark.Todo{}
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return Frame{}, fmt.Errorf("encoding a snapshot: %w", err)
	}
	return NewFrame(toolmark.Event{Seq: d.Seq, TurnID: t.ID, MessageID: t.AssistantMessageID, Type: toolmark.EventSnapshot,
		Time: time.Now().UTC(), Data: raw}, d), nil
}

// deliver hands fn the frames up to and including the terminal event, and
// reports whether that event was among them.
func deliver(frames []Frame, fn func([]Frame) error) (done bool, err error) {
	for i, f := range frames {
		if f.Event.Type.Terminal() {
			return true, fn(frames[:i+1])
		}
	}
	return false, fn(frames)
}

// CatchUp returns the CatchUpFunc of a rendering follower of t: it brings a
// view up to the event upTo at least — for a turn running on this replica,
// from its runner's committed state (Hub.Open); for any other, or when that
// fails, from the log: the turn's snapshot when the view is behind it, then
// the events after.
func (h *Hub) CatchUp(ctx context.Context, t toolmark.Turn) CatchUpFunc {
	return func(v *liveview.View, upTo int64) error {
		if v.Seq() < upTo && h.seed(ctx, t.ID, v) && v.Seq() >= upTo {
			return nil
		}
		if v.Seq() < upTo {
			snap, err := h.snapshot(ctx, t)
			if err != nil {
				return fmt.Errorf("catching up: %w", err)
			}
			if snap.Event.Seq > v.Seq() && snap.Event.Seq <= upTo {
				if err := v.Apply(snap.Event, toolmark.Draft{Type: toolmark.EventSnapshot, Data: snap.Data}); err != nil {
					return fmt.Errorf("catching up: %w", err)
				}
			}
		}
		for v.Seq() < upTo {
			more, err := h.log.EventsAfter(ctx, t.ID, v.Seq(), logPage)
			if err != nil {
				return fmt.Errorf("catching up: %w", err)
			}
			if len(more) == 0 {
				return errors.New("catching up: the log ends before the stream's events")
			}
			for _, e := range more {
				if e.Seq > upTo {
					return nil
				}
				if err := v.ApplyEvent(e); err != nil {
					return fmt.Errorf("catching up: %w", err)
				}
			}
		}
		return nil
	}
}
