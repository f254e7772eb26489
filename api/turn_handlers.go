package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
)

type turnResponse struct {
	Turn      toolmark.Turn `json:"turn"`
	EventsURL string        `json:"eventsUrl"`
}

// startTurn creates a turn (or finds the one an Idempotency-Key names) and
// hands a new one to the runner; replaces, when set, is the user message
// the turn takes the place of (see store.NewTurn).
func (s *Server) startTurn(r *http.Request, ownerID, conversationID string, in toolmark.TurnInput, replaces string) (toolmark.Turn, error) {
	if err := s.checkRequest(r, in.Content); err != nil {
		return toolmark.Turn{}, err
	}
	if err := s.checkModel(in.Model); err != nil {
		return toolmark.Turn{}, err
	}
	if err := s.checkAttachments(r, ownerID, conversationID, in); err != nil {
		return toolmark.Turn{}, err
	}
	return s.createTurn(r, ownerID, conversationID, in, replaces)
}

// checkRequest refuses a question's text that is empty, too long or not
// UTF-8, and an Idempotency-Key that is too long or not UTF-8.
func (s *Server) checkRequest(r *http.Request, content string) error {
	if strings.TrimSpace(content) == "" {
		return toolmark.Errorf(toolmark.EINVALID, "content must not be empty")
	}
	if len(content) > s.cfg.MaxMessageBytes {
		return toolmark.Errorf(toolmark.ETOOLARGE, "the message is longer than %d bytes", s.cfg.MaxMessageBytes)
	}
	if !utf8.ValidString(content) || strings.IndexByte(content, 0) >= 0 {
		return toolmark.Errorf(toolmark.EINVALID, "content must be valid UTF-8 without NUL characters")
	}
	if key := r.Header.Get("Idempotency-Key"); len(key) > 200 || !utf8.ValidString(key) {
		return toolmark.Errorf(toolmark.EINVALID, "Idempotency-Key must be at most 200 bytes of UTF-8")
	}
	return nil
}

// createTurn creates a checked turn (startTurn, startQuestion) and tells
// the conversation's watchers.
func (s *Server) createTurn(r *http.Request, ownerID, conversationID string, in toolmark.TurnInput, replaces string) (toolmark.Turn, error) {
	t, err := s.cfg.Runner.Create(r.Context(), store.NewTurn{
		OwnerID: ownerID, ConversationID: conversationID, Input: in, DefaultModel: s.cfg.Models.Default().ID,
		IdempotencyKey: r.Header.Get("Idempotency-Key"), Replaces: replaces, Title: titleFrom(in.Content),
	})
	if err == nil {
		s.watch.publish(t.ConversationID, t.ID)
	}
	return t, err
}

func (s *Server) handleCreateTurn(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	var req toolmark.TurnInput
	if err := decodeJSON(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	t, err := s.startTurn(r, u.ID, chi.URLParam(r, "id"), req, "")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		s.stream(w, r, t, 0)
		return
	}
	writeTurnAccepted(w, t)
}

// writeTurnAccepted answers a request that started turn t: 202, where to
// read it and where to follow it.
func writeTurnAccepted(w http.ResponseWriter, t toolmark.Turn) {
	w.Header().Set("Location", "/api/turns/"+t.ID)
	writeJSON(w, http.StatusAccepted, turnResponse{Turn: t, EventsURL: "/api/turns/" + t.ID + "/events"})
}

func (s *Server) handleGetTurn(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	t, err := s.cfg.Store.GetTurn(r.Context(), u.ID, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	content, seq, err := s.cfg.Store.Snapshot(r.Context(), t.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !t.Status.Final() {
		if t.Recovering, err = s.cfg.Store.Recovering(r.Context(), t.ID); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	html, err := s.cfg.Render(content)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	calls, err := s.cfg.Store.ToolCalls(r.Context(), t.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	todos, err := s.cfg.Store.Todos(r.Context(), t.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if calls == nil {
		calls = []toolmark.ToolCallRecord{}
	}
	if todos == nil {
		todos = []toolmark.Todo{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"turn": t, "content": content, "html": html, "seq": seq,
		"toolCalls": calls, "todos": todos})
}

// handleCancelTurn asks the turn to stop, wherever it runs. Cancelling a
// finished turn changes nothing and is not an error.
func (s *Server) handleCancelTurn(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	t, err := s.cfg.Store.RequestCancel(r.Context(), u.ID, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !t.Status.Final() {
		s.cfg.Runner.Cancel(t.ID)
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"turn": t})
}

// handleChat runs a whole turn and answers with the final assistant
// message, for clients that do not stream. The turn goes on if the client
// leaves.
func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	var req struct {
		ConversationID string `json:"conversationId"`
		toolmark.TurnInput
	}
	if err := decodeJSON(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if strings.TrimSpace(req.Content) == "" {
		s.writeError(w, r, toolmark.Errorf(toolmark.EINVALID, "content must not be empty"))
		return
	}
	if req.ConversationID == "" {
		c, err := s.cfg.Store.CreateConversation(r.Context(), u.ID, titleFrom(req.Content))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		req.ConversationID = c.ID
	}
	t, err := s.startTurn(r, u.ID, req.ConversationID, req.TurnInput, "")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if t, err = s.cfg.Runner.Wait(r.Context(), t.ID); err != nil {
		s.writeError(w, r, err)
		return
	}
	msgs, err := s.cfg.Store.ListMessages(r.Context(), u.ID, req.ConversationID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	for _, m := range msgs {
		if m.ID == t.AssistantMessageID {
			v, err := s.viewMessage(r, m)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			writeJSON(w, http.StatusOK, map[string]any{"conversationId": req.ConversationID, "turn": t, "message": v})
			return
		}
	}
	s.writeError(w, r, toolmark.Errorf(toolmark.EINTERNAL, "the turn's message is missing"))
}

// titleFrom makes a conversation title of the first line of a message.
func titleFrom(content string) string {
	line := strings.TrimSpace(strings.SplitN(strings.TrimSpace(content), "\n", 2)[0])
	if utf8.RuneCountInString(line) > 60 {
		cut := string([]rune(line)[:60])
		// End at a word boundary when there is one in the second half.
		if i := strings.LastIndexAny(cut, " \t"); i >= len(cut)/2 {
			cut = cut[:i]
		}
		line = strings.TrimRight(cut, " \t,.;:") + "…"
	}
	return line
}

func marshal(v any) (json.RawMessage, error) { return json.Marshal(v) }
