package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/fanout"
	"github.com/toolmark/toolmark/internal/sse"
	"github.com/toolmark/toolmark/store"
)

// eventsPage is how many events a stream reads from the log at a time.
const eventsPage = 500

// handleTurnEvents streams a turn's events after the cursor given by
// Last-Event-ID (which wins, as the browser sends it on reconnect) or
// ?after=N.
func (s *Server) handleTurnEvents(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		s.writeError(w, r, errDraining)
		return
	}
	u, _ := UserFromContext(r.Context())
	t, err := s.streamTurn(r.Context(), u.ID, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var after int64
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		after, err = parseCursor(v, "Last-Event-ID")
	} else if v := r.URL.Query().Get("after"); v != "" {
		after, err = parseCursor(v, "after")
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.stream(w, r, t, after)
}

// streamTurn finds the turn a stream follows: in memory when this replica
// runs it, so that a follower of a live turn reaches its first event
// without a query, else in the store. Another user's turn is not found
// either way.
func (s *Server) streamTurn(ctx context.Context, userID, turnID string) (toolmark.Turn, error) {
	if t, owner, ok := s.cfg.Runner.Local(turnID); ok && owner == userID {
		return t, nil
	}
	return s.cfg.Store.GetTurn(ctx, userID, turnID)
}

// stream writes the events of t after the cursor until the terminal event,
// the client leaves, or the server shuts down.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, t toolmark.Turn, after int64) {
	ctx := r.Context()
	render, err := wantsRender(r) // render.go
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Turn-Id", t.ID)
	if !render {
		if ts, tctx, cancel := s.take(w, r); ts != nil {
			s.streamTaken(tctx, cancel, ts, h, t, after) // direct_park.go
			return
		}
	}
	rc := http.NewResponseController(w)
	// A stream outlives the server's write timeout; each write has its own.
	_ = rc.SetWriteDeadline(s.writeBy())
	w.WriteHeader(http.StatusOK)
	s.cfg.Metrics.StreamOpened()
	defer s.cfg.Metrics.StreamClosed()
	if _, err := io.WriteString(w, streamPreamble); err != nil {
		return
	}
	_ = rc.Flush()
	if render {
		err = s.renderStream(ctx, w, rc, t, after)
	} else {
		err = s.followFrames(ctx, t, after, func(frames []fanout.Frame) error {
			_ = rc.SetWriteDeadline(s.writeBy())
			for _, f := range frames {
				if _, err := w.Write(f.SSE); err != nil {
					return err
				}
			}
			return rc.Flush()
		}, func() error {
			_ = rc.SetWriteDeadline(s.writeBy())
			if _, err := io.WriteString(w, keepAlive); err != nil {
				return err
			}
			return rc.Flush()
		}, nil)
	}
	if errors.Is(err, errStreamClosed) {
		// The server is going: the client reconnects at once, with its
		// cursor, to another replica.
		_, _ = io.WriteString(w, closingHint)
		_ = rc.Flush()
	} else if err != nil && ctx.Err() == nil {
		s.log.Debug("event stream ended", "turn", t.ID, "err", err)
	}
}

// The texts of a stream besides its events: its first (the reconnection
// delay a client waits after a drop), the comment of an idle stream, which
// clients ignore and which keeps proxies from closing it, and the last of a
// stream the server closes.
var (
	streamPreamble = "retry: 1000\n\n"
	keepAlive      = string(sse.AppendComment(nil, "keep-alive"))
	closingHint    = fmt.Sprintf(": %s\nretry: %d\n\n", errStreamClosed, closedRetry.Milliseconds())
)

// writeBy is the deadline of a stream's next write (StreamWriteTimeout).
func (s *Server) writeBy() time.Time { return time.Now().Add(s.cfg.StreamWriteTimeout) }

// closedRetry is the reconnection delay a stream the server closes asks of
// its client.
const closedRetry = 100 * time.Millisecond

// errStreamClosed ends a stream when the server shuts down.
var errStreamClosed = errors.New("the server is shutting down")

// followFrames hands the committed events of t after the cursor to fn, with
// each event's SSE frame built once for all followers, a batch at a time and
// in seq order, until the batch holding the terminal event, ctx ends, the
// server closes its streams (errStreamClosed), or fn fails. When the log no
// longer holds the cursor, the first batch is a snapshot event. idle is
// called when nothing arrived for the heartbeat interval. park, when not
// nil, is offered a follower that has caught up with a local turn's tail,
// instead of waiting: it reports whether it parked the follower with the
// hub and, if so, returns the cursor the hub wrote up to once it handed the
// follower back (streamTaken). It returns nil
// after the terminal event, or when the turn is over and nothing follows
// the cursor.
//
// Events come from the hub's in-memory tail of the turn; the store is read
// only for a cursor older than the tail (a late resume, a follower that fell
// behind) and for turns this replica knows nothing of.
func (s *Server) followFrames(ctx context.Context, t toolmark.Turn, after int64, fn func([]fanout.Frame) error, idle func() error, park func(cursor int64) (int64, bool, error)) error {
	heartbeat := time.NewTicker(s.cfg.Heartbeat)
	defer heartbeat.Stop()
	hub := s.cfg.Runner.Hub()
	leave := hub.Follow(t.ID)
	defer leave()
	cursor, snapshots := after, 0
	for {
		tail := hub.After(t.ID, cursor)
		if tail.Store {
			evs, err := s.cfg.Store.EventsAfter(ctx, t.ID, cursor, eventsPage)
			if errors.Is(err, store.ErrCursorPruned) && snapshots == 0 {
				snap, err := s.snapshot(ctx, t)
				if err != nil {
					s.log.Error("building a snapshot", "turn", t.ID, "err", err)
					return err
				}
				snapshots++
				if err := fn([]fanout.Frame{fanout.NewFrame(snap, nil)}); err != nil {
					return err
				}
				cursor = snap.Seq
				continue
			}
			if err != nil {
				if ctx.Err() == nil {
					s.log.Error("reading events", "turn", t.ID, "after", cursor, "err", err)
				}
				return err // the client reconnects with Last-Event-ID
			}
			frames := make([]fanout.Frame, len(evs))
			for i, e := range evs {
				frames[i] = fanout.NewFrame(e, nil)
			}
			hub.Seed(t.ID, frames)
			if len(frames) > 0 {
				if done, err := deliver(frames, fn); err != nil || done {
					return err
				}
				cursor = frames[len(frames)-1].Event.Seq
				if len(frames) == eventsPage {
					continue
				}
				// Wait for what comes next: the hub wakes the follower
				// when it knows of newer events.
				if tail = hub.After(t.ID, cursor); len(tail.Frames) > 0 {
					continue
				}
			} else if cur, err := s.cfg.Store.TurnByID(ctx, t.ID); err == nil && cur.Status.Final() && cur.LastSeq <= cursor {
				return nil // nothing after the cursor of a finished turn
			}
		} else if len(tail.Frames) > 0 {
			if done, err := deliver(tail.Frames, fn); err != nil || done {
				return err
			}
			cursor = tail.Frames[len(tail.Frames)-1].Event.Seq
			continue
		} else if tail.Done {
			return nil
		}
		if park != nil && !tail.Store {
			c, parked, err := park(cursor)
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
		case <-s.closingCtx.Done():
			return errStreamClosed
		case <-tail.Wake:
		case <-heartbeat.C:
			if err := idle(); err != nil {
				return err
			}
			hub.PollIdle(t.ID) // a notification may have been lost
		}
	}
}

// deliver hands fn the frames up to and including the terminal event, and
// reports whether that event was among them.
func deliver(frames []fanout.Frame, fn func([]fanout.Frame) error) (done bool, err error) {
	for i, f := range frames {
		if f.Event.Type.Terminal() {
			return true, fn(frames[:i+1])
		}
	}
	return false, fn(frames)
}

// snapshot is the event that replaces a pruned stretch of the log: the
// message content and the seq it reflects, with the turn's tool calls and
// todos.
func (s *Server) snapshot(ctx context.Context, t toolmark.Turn) (toolmark.Event, error) {
	content, seq, err := s.cfg.Store.Snapshot(ctx, t.ID)
	if err != nil {
		return toolmark.Event{}, err
	}
	cur, err := s.cfg.Store.TurnByID(ctx, t.ID)
	if err != nil {
		return toolmark.Event{}, err
	}
	calls, err := s.cfg.Store.ToolCalls(ctx, t.ID)
	if err != nil {
		return toolmark.Event{}, err
	}
	todos, err := s.cfg.Store.Todos(ctx, t.ID)
	if err != nil {
		return toolmark.Event{}, err
	}
	if calls == nil {
		calls = []toolmark.ToolCallRecord{}
	}
	if todos == nil {
		todos = []toolmark.Todo{}
	}
	data, err := marshal(toolmark.SnapshotData{Content: content, Seq: seq, Status: cur.Status, ToolCalls: calls, Todos: todos})
	if err != nil {
		return toolmark.Event{}, err
	}
	return toolmark.Event{Seq: seq, TurnID: t.ID, MessageID: t.AssistantMessageID, Type: toolmark.EventSnapshot,
		Time: time.Now().UTC(), Data: data}, nil
}
