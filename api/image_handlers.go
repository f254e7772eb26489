package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
)

var errNoImage = toolmark.Errorf(toolmark.ENOTFOUND, "that image is not kept (the turn's event log no longer holds it)")

// handleToolImage serves an image a tool call returned, from the call's
// tool_call_success event in its turn's log (owner only): the page shows it
// in the call's details. The bytes are a tool's, untrusted: only what
// sniffs as PNG, JPEG, GIF or WebP is served, with that type, nosniff and a
// policy that runs nothing.
func (s *Server) handleToolImage(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	t, err := s.cfg.Store.GetTurn(r.Context(), u.ID, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	n, err := strconv.Atoi(chi.URLParam(r, "n"))
	if err != nil || n < 0 || n >= toolmark.MaxToolImages {
		s.writeError(w, r, errNoImage)
		return
	}
	img, err := s.toolImage(r, t.ID, chi.URLParam(r, "callId"), n)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	mt := toolmark.RasterType(img)
	if mt == "" {
		s.writeError(w, r, errNoImage)
		return
	}
	h := w.Header()
	h.Set("Content-Type", mt)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Content-Disposition", "inline")
	h.Set("Cache-Control", "private, max-age=86400, immutable")
	_, _ = w.Write(img)
}

// toolImage reads image n of call callID from the success event in turn
// turnID's log.
func (s *Server) toolImage(r *http.Request, turnID, callID string, n int) ([]byte, error) {
	var after int64
	for {
		evs, err := s.cfg.Store.EventsAfter(r.Context(), turnID, after, 1000)
		if errors.Is(err, store.ErrCursorPruned) {
			return nil, errNoImage
		}
		if err != nil {
			return nil, err
		}
		if len(evs) == 0 {
			return nil, errNoImage
		}
		for _, e := range evs {
			after = e.Seq
			if e.Type != toolmark.EventToolCallSuccess {
				continue
			}
			var d toolmark.ToolCallData
			if json.Unmarshal(e.Data, &d) != nil || d.ToolCallID != callID {
				continue
			}
			if n >= len(d.Images) {
				return nil, errNoImage
			}
			return d.Images[n].Data, nil
		}
	}
}
