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
)

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
	setStreamHead(h, t)
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
		err = s.encodeStream(ctx, w, rc, t, after, eventsEncoder{})
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

// encodeStream writes the frames of t after the cursor through enc until
// the terminal event, then what closes enc's stream.
func (s *Server) encodeStream(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, t toolmark.Turn, after int64, enc encoder) error {
	err := s.followFrames(ctx, t, after, func(frames []fanout.Frame) error {
		_ = rc.SetWriteDeadline(s.writeBy())
		if err := enc.write(w, frames); err != nil {
			return err
		}
		return rc.Flush()
	}, func() error {
		_ = rc.SetWriteDeadline(s.writeBy())
		if _, err := io.WriteString(w, keepAlive); err != nil {
			return err
		}
		return rc.Flush()
	}, nil)
	if err != nil {
		return err
	}
	_ = rc.SetWriteDeadline(s.writeBy())
	if err := enc.end(w); err != nil {
		return err
	}
	return rc.Flush()
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
var errStreamClosed = fanout.ErrClosed

// followFrames follows t from the cursor through the hub (fanout.Hub.Follow):
// fn takes each batch of frames, idle is called when nothing arrived for the
// heartbeat interval, park (when not nil) may park a follower that caught
// up. It ends with errStreamClosed when the server closes its streams; a
// failed read of the log is logged here.
func (s *Server) followFrames(ctx context.Context, t toolmark.Turn, after int64, fn func([]fanout.Frame) error, idle func() error, park func(cursor int64) (int64, bool, error)) error {
	err := s.cfg.Runner.Hub().Follow(ctx, t, after, fanout.Follower{
		Frames: fn, Idle: idle, Heartbeat: s.cfg.Heartbeat, Park: park, Closing: s.closingCtx.Done(),
	})
	if errors.Is(err, fanout.ErrLogRead) && ctx.Err() == nil {
		s.log.Error("following a turn", "turn", t.ID, "after", after, "err", err)
	}
	return err
}
