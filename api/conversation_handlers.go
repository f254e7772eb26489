package api

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// messageView is a message as the API returns it: the stored markup, its
// rendering, and the tool calls and todos of its turn.
type messageView struct {
	toolmark.Message
	HTML      string                    `json:"html"`
	ToolCalls []toolmark.ToolCallRecord `json:"toolCalls"`
	Todos     []toolmark.Todo           `json:"todos"`
}

func (s *Server) handleCreateConversation(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	var req struct {
		Title string `json:"title"`
	}
	if r.ContentLength != 0 || r.Header.Get("Content-Type") != "" {
		if err := decodeJSON(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	c, err := s.cfg.Store.CreateConversation(r.Context(), u.ID, strings.TrimSpace(req.Title))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"conversation": c})
}

func (s *Server) handleListConversations(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	cs, err := s.cfg.Store.ListConversations(r.Context(), u.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if cs == nil {
		cs = []toolmark.Conversation{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversations": cs})
}

func (s *Server) handleGetConversation(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	id := chi.URLParam(r, "id")
	c, err := s.cfg.Store.GetConversation(r.Context(), u.ID, id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	msgs, err := s.cfg.Store.ListMessages(r.Context(), u.ID, id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	views := make([]messageView, 0, len(msgs))
	for _, m := range msgs {
		v, err := s.viewMessage(r, m)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		views = append(views, v)
	}
	var active *toolmark.Turn
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == toolmark.RoleAssistant && msgs[i].Status == toolmark.MessageStreaming && msgs[i].TurnID != "" {
			if t, err := s.cfg.Store.GetTurn(r.Context(), u.ID, msgs[i].TurnID); err == nil && !t.Status.Final() {
				active = &t
			}
			break
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversation": c, "messages": views, "activeTurn": active})
}

// viewMessage renders a message and adds its turn's tool calls and todos.
// A user's text is neutralised before rendering, so a user cannot forge a
// tool widget either.
func (s *Server) viewMessage(r *http.Request, m toolmark.Message) (messageView, error) {
	v := messageView{Message: m, ToolCalls: []toolmark.ToolCallRecord{}, Todos: []toolmark.Todo{}}
	src := m.Content
	if m.Role != toolmark.RoleAssistant {
		src = toolcallmarkup.Neutralise(src)
	}
	html, err := s.cfg.Render(src)
	if err != nil {
		return v, err
	}
	v.HTML = html
	if m.Role == toolmark.RoleAssistant && m.TurnID != "" {
		calls, err := s.cfg.Store.ToolCalls(r.Context(), m.TurnID)
		if err != nil {
			return v, err
		}
		todos, err := s.cfg.Store.Todos(r.Context(), m.TurnID)
		if err != nil {
			return v, err
		}
		if calls != nil {
			v.ToolCalls = calls
		}
		if todos != nil {
			v.Todos = todos
		}
	}
	return v, nil
}

func (s *Server) handleDeleteConversation(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	if err := s.cfg.Store.DeleteConversation(r.Context(), u.ID, chi.URLParam(r, "id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
