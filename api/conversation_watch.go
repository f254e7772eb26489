package api

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
)

// A conversation's watchers: the streams open on
// GET /api/conversations/{id}/events, which say when a turn starts in it,
// so that a second tab or client on the same conversation follows turns
// started elsewhere. Starting a turn costs one send per watcher of its
// conversation; a watcher costs one map entry and waits in a select with
// no timer but the heartbeat.

// watchers holds the open watch streams by conversation.
type watchers struct {
	mu sync.Mutex
	by map[string]map[chan string]struct{}
}

// add registers a watcher of conversation id; leave unregisters it.
func (ws *watchers) add(id string) (ch chan string, leave func()) {
	ch = make(chan string, 1)
	ws.mu.Lock()
	if ws.by == nil {
		ws.by = make(map[string]map[chan string]struct{})
	}
	if ws.by[id] == nil {
		ws.by[id] = make(map[chan string]struct{})
	}
	ws.by[id][ch] = struct{}{}
	ws.mu.Unlock()
	return ch, func() {
		ws.mu.Lock()
		delete(ws.by[id], ch)
		if len(ws.by[id]) == 0 {
			delete(ws.by, id)
		}
		ws.mu.Unlock()
	}
}

// publish tells conversation id's watchers that turn turnID started. A
// watcher that has not read the previous turn yet gets the newest one
// instead.
func (ws *watchers) publish(id, turnID string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for ch := range ws.by[id] {
		select {
		case ch <- turnID:
		default:
			select {
			case <-ch:
			default:
			}
			ch <- turnID
		}
	}
}

// conversations returns the ids of the conversations watched here.
func (ws *watchers) conversations() []string {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ids := make([]string, 0, len(ws.by))
	for id := range ws.by {
		ids = append(ids, id)
	}
	return ids
}

// turnStarted is the data of a watch stream's "turn" event.
type turnStarted struct {
	ConversationID string `json:"conversationId"`
	TurnID         string `json:"turnId"`
}

// handleConversationEvents streams a "turn" event each time a turn starts
// in the conversation, the first at once when one is being answered.
func (s *Server) handleConversationEvents(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	id := chi.URLParam(r, "id")
	if s.draining.Load() {
		s.writeError(w, r, errDraining)
		return
	}
	// Watch before reading the last turn, so that none starts unseen between.
	ch, leave := s.watch.add(id)
	defer leave()
	p, err := s.cfg.Store.OpenConversation(r.Context(), u.ID, id, 0, 1)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(s.writeBy())
	w.WriteHeader(http.StatusOK)
	if _, err := io.WriteString(w, streamPreamble); err != nil {
		return
	}
	send := func(turnID string) error {
		data, _ := json.Marshal(turnStarted{ConversationID: id, TurnID: turnID})
		_ = rc.SetWriteDeadline(s.writeBy())
		// json.Marshal writes one line: the frame cannot end early.
		if _, err := io.WriteString(w, "event: turn\ndata: "+string(data)+"\n\n"); err != nil {
			return err
		}
		return rc.Flush()
	}
	if n := len(p.Messages); n > 0 {
		if last := p.Messages[n-1]; last.TurnID != "" && last.TurnStatus != "" && !last.TurnStatus.Final() {
			if send(last.TurnID) != nil {
				return
			}
		}
	}
	_ = rc.Flush()
	heartbeat := time.NewTicker(s.cfg.Heartbeat)
	defer heartbeat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.closingCtx.Done():
			_, _ = io.WriteString(w, closingHint)
			_ = rc.Flush()
			return
		case turnID := <-ch:
			if send(turnID) != nil {
				return
			}
		case <-heartbeat.C:
			_ = rc.SetWriteDeadline(s.writeBy())
			if _, err := io.WriteString(w, keepAlive); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}
