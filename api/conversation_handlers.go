package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/store"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// messageView is a message as the API returns it: the stored markup, its
// rendering, and the tool calls, todos and tokens of its turn.
type messageView struct {
	toolmark.Message
	HTML      string                    `json:"html"`
	ToolCalls []toolmark.ToolCallRecord `json:"toolCalls"`
	Todos     []toolmark.Todo           `json:"todos"`
	Usage     *toolmark.Usage           `json:"usage,omitempty"`
	Model     string                    `json:"model,omitempty"` // an answer's: the id of the model that wrote it
	// Versions are, for a question asked again, the ids of every question
	// asked in its place, oldest first (POST /api/messages/{id}/select
	// switches to one).
	Versions []string `json:"versions,omitempty"`
	// Attachments are, for a question, the files attached to it (their
	// metadata and URL).
	Attachments []toolmark.Upload `json:"attachments,omitempty"`
	// Error is, for an answer whose turn failed, the sentence its end
	// carried (what happened and what to do).
	Error string `json:"error,omitempty"`
}

// withSummary returns m with the summary of its thinking's fold written
// (statustext.Thought), as clients show it.
func withSummary(m toolmark.Message) toolmark.Message {
	if m.Reasoning != nil {
		r := *m.Reasoning
		r.Summary = statustext.Thought(r.DurationMs)
		m.Reasoning = &r
	}
	return m
}

// renderVersion names the rendering of stored messages; change it when
// the renderer's output changes, and renderings kept with finished messages
// are made again.
const renderVersion = "r3"

// renderKey is what a message's kept rendering must have been made from.
func renderKey(seq int64) string { return renderVersion + ":" + strconv.FormatInt(seq, 10) }

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

// handleListConversations answers a page of the user's conversations,
// most recently updated first (?limit, default 50; ?after, the next
// cursor of the page before), or with ?q those whose title or messages
// hold the text, each with a snippet.
func (s *Server) handleListConversations(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	q := r.URL.Query()
	limit := 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > store.MaxPageMessages {
			s.writeError(w, r, toolmark.Errorf(toolmark.EINVALID, "limit must be between 1 and %d", store.MaxPageMessages))
			return
		}
		limit = n
	}
	l, err := s.cfg.Store.ListConversationsPage(r.Context(), u.ID, q.Get("q"), q.Get("after"), limit)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	body := map[string]any{"conversations": l.Conversations}
	if l.Next != "" {
		body["next"] = l.Next
	}
	writeJSON(w, http.StatusOK, body)
}

// handleGetConversation answers a conversation with a page of its
// messages: the latest ?limit (default 50) before the position ?before
// (default: the end), in a constant number of queries whatever the
// conversation's length. A finished message's rendering is kept with it,
// so it is rendered once.
func (s *Server) handleGetConversation(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	before, limit, err := pageParams(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p, err := s.cfg.Store.OpenConversation(r.Context(), u.ID, chi.URLParam(r, "id"), before, limit)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	views := make([]messageView, len(p.Messages))
	var fresh []store.RenderedMessage
	for i, e := range p.Messages {
		v := messageView{Message: withSummary(e.Message), HTML: e.HTML, ToolCalls: e.ToolCalls, Todos: e.Todos, Usage: e.Usage, Model: e.Model, Versions: e.Versions}
		if e.Role == toolmark.RoleAssistant && e.TurnStatus == toolmark.TurnFailed {
			v.Error = e.TurnError
		}
		if key := renderKey(e.Seq); e.HTMLKey != key {
			if v.HTML, err = s.render(e.Message); err != nil {
				s.writeError(w, r, err)
				return
			}
			if e.Status != toolmark.MessageStreaming {
				fresh = append(fresh, store.RenderedMessage{ID: e.ID, Key: key, HTML: v.HTML})
			}
		}
		views[i] = v
	}
	s.keepRendered(fresh)
	if err := s.addAttachments(r, views); err != nil {
		s.writeError(w, r, err)
		return
	}
	var active *toolmark.Turn
	if n := len(p.Messages); n > 0 {
		if last := p.Messages[n-1]; last.Role == toolmark.RoleAssistant && !last.TurnStatus.Final() && last.TurnID != "" {
			if t, err := s.cfg.Store.GetTurn(r.Context(), u.ID, last.TurnID); err == nil && !t.Status.Final() {
				active = &t
			}
		}
	}
	body := map[string]any{"conversation": p.Conversation, "messages": views, "more": p.More, "activeTurn": active}
	if p.More {
		body["before"] = p.Messages[0].Pos
	}
	writeJSON(w, http.StatusOK, body)
}

// pageParams reads ?before and ?limit.
func pageParams(r *http.Request) (before int64, limit int, err error) {
	q := r.URL.Query()
	if v := q.Get("before"); v != "" {
		if before, err = strconv.ParseInt(v, 10, 64); err != nil || before < 0 {
			return 0, 0, toolmark.Errorf(toolmark.EINVALID, "before must be a message position (a whole number)")
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > store.MaxPageMessages {
			return 0, 0, toolmark.Errorf(toolmark.EINVALID, "limit must be between 1 and %d", store.MaxPageMessages)
		}
		limit = n
	}
	return before, limit, nil
}

// render renders a message's content. A user's text is neutralised first,
// so a user cannot forge a tool widget either.
func (s *Server) render(m toolmark.Message) (string, error) {
	src := m.Content
	if m.Role != toolmark.RoleAssistant {
		src = toolcallmarkup.Neutralise(src)
	}
	return s.cfg.Render(src)
}

// keepRendered keeps the renderings of finished messages with them, after
// the answer: a failure only means they are rendered again next time.
func (s *Server) keepRendered(ms []store.RenderedMessage) {
	if len(ms) == 0 {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.cfg.Store.CacheHTML(ctx, ms); err != nil {
			s.log.Warn("keeping rendered messages", "messages", len(ms), "err", err)
		}
	}()
}

// viewMessage renders a message and adds its turn's tool calls and todos.
// A user's text is neutralised before rendering, so a user cannot forge a
// tool widget either.
func (s *Server) viewMessage(r *http.Request, m toolmark.Message) (messageView, error) {
	v := messageView{Message: withSummary(m), ToolCalls: []toolmark.ToolCallRecord{}, Todos: []toolmark.Todo{}}
	html, err := s.render(m)
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
