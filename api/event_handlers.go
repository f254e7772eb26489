package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
)

// eventsPage is how many events a stream reads from the log at a time.
const eventsPage = 500

// handleTurnEvents streams a turn's events after the cursor given by
// Last-Event-ID (which wins, as the browser sends it on reconnect) or
// ?after=N.
func (s *Server) handleTurnEvents(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	t, err := s.cfg.Store.GetTurn(r.Context(), u.ID, chi.URLParam(r, "id"))
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

// stream writes the events of t after the cursor until the terminal event,
// the client leaves, or the server shuts down.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, t toolmark.Turn, after int64) {
	ctx := r.Context()
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives the server's write timeout
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Turn-Id", t.ID)
	w.WriteHeader(http.StatusOK)
	s.cfg.Metrics.StreamOpened()
	defer s.cfg.Metrics.StreamClosed()
	if _, err := fmt.Fprint(w, "retry: 1000\n\n"); err != nil {
		return
	}
	_ = rc.Flush()

	heartbeat := time.NewTicker(s.cfg.Heartbeat)
	defer heartbeat.Stop()
	hub := s.cfg.Runner.Hub()
	cursor, snapshots := after, 0
	for {
		evs, err := s.cfg.Store.EventsAfter(ctx, t.ID, cursor, eventsPage)
		if errors.Is(err, store.ErrCursorPruned) && snapshots == 0 {
			snap, err := s.snapshot(ctx, t)
			if err != nil {
				s.log.Error("building a snapshot", "turn", t.ID, "err", err)
				return
			}
			snapshots++
			if WriteEvent(w, snap) != nil {
				return
			}
			_ = rc.Flush()
			cursor = snap.Seq
			continue
		}
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("reading events", "turn", t.ID, "after", cursor, "err", err)
			}
			return // the client reconnects with Last-Event-ID
		}
		for _, e := range evs {
			if WriteEvent(w, e) != nil {
				return
			}
			cursor = e.Seq
			if e.Type.Terminal() {
				_ = rc.Flush()
				return
			}
		}
		if len(evs) > 0 {
			if rc.Flush() != nil {
				return
			}
			if len(evs) == eventsPage {
				continue
			}
		} else if cur, err := s.cfg.Store.TurnByID(ctx, t.ID); err == nil && cur.Status.Final() && cur.LastSeq <= cursor {
			return // nothing after the cursor of a finished turn
		}
		select {
		case <-ctx.Done():
			return
		case <-s.closing:
			return
		case <-hub.Wait(t.ID, cursor):
		case <-heartbeat.C:
			if WriteComment(w, "keep-alive") != nil || rc.Flush() != nil {
				return
			}
		}
	}
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
