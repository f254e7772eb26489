package api

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/fanout"
)

// Live rendering: a client that opens a turn's event stream with
// ?render=html gets "render" frames instead of the events — the answer
// rendered to HTML by the turn's shared live view (package liveview, kept
// by the fan-out), as blocks, while it streams:
//
//	id: 42
//	event: render
//	data: {"seq":42,"count":7,"blocks":[{"i":6,"html":"<p>…</p>\n"}],"status":"Searching knowledge base for:\nresume"}
//
// The id is the seq the frame reflects: a browser's EventSource resumes
// from it with Last-Event-ID, and a resumed stream starts with a reset
// frame. The first frame of a stream has "reset":true and every block;
// later ones only the blocks that changed; blocks at or past count are
// gone. todos is the plan when it changed, reasoning the model's thinking
// when it changed (plain text, see liveview.Reasoning); turn (status, error, code,
// usage) and final come once the turn has ended, and the stream ends after
// that frame. Frames are coalesced to what a person can see: at most one
// per renderInterval, the final one at once.

// renderInterval is the least time between two render frames of a stream.
const renderInterval = 75 * time.Millisecond

// wantsRender reports whether the stream asked for rendered HTML, or
// returns an error for a render parameter it does not know.
func wantsRender(r *http.Request) (bool, error) {
	switch r.URL.Query().Get("render") {
	case "":
		return false, nil
	case "html":
		return true, nil
	}
	return false, toolmark.Errorf(toolmark.EINVALID, "render must be html")
}

// renderStream writes the render frames of t from the cursor after until
// the turn's end.
func (s *Server) renderStream(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, t toolmark.Turn, after int64) error {
	tv := s.cfg.Runner.Hub().View(t.ID)
	catchUp := s.cfg.Runner.Hub().CatchUp(ctx, t)
	since, status, final := int64(-1), "", false
	var last time.Time
	write := func(frames []fanout.Frame) error {
		frame, u, err := tv.Render(since, status, frames, catchUp)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("live rendering", "turn", t.ID, "err", err)
			}
			return nil // the events are what matters: the page shows the stored answer at the end
		}
		since, status, final = u.Version, u.Status, u.Final
		if frame == nil {
			return nil
		}
		last = time.Now()
		_ = rc.SetWriteDeadline(s.writeBy())
		if _, err := w.Write(frame); err != nil {
			return err
		}
		return rc.Flush()
	}
	if after > 0 {
		// A resumed stream starts from the state at its cursor.
		if err := tv.Prime(after, catchUp); err != nil {
			s.log.Warn("live rendering", "turn", t.ID, "err", err)
		}
		if err := write(nil); err != nil {
			return err
		}
	}
	return s.followFrames(ctx, t, after, func(frames []fanout.Frame) error {
		if final {
			return nil
		}
		if !frames[len(frames)-1].Event.Type.Terminal() {
			// Coalesce: what arrives meanwhile goes into the next frame.
			if wait := renderInterval - time.Since(last); wait > 0 {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-s.closingCtx.Done():
					return errStreamClosed
				case <-time.After(wait):
				}
			}
		}
		return write(frames)
	}, func() error {
		_ = rc.SetWriteDeadline(s.writeBy())
		if _, err := io.WriteString(w, keepAlive); err != nil {
			return err
		}
		return rc.Flush()
	}, nil)
}
