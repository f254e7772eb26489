package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
)

// The everyday actions on conversations: rename, search, retry,
// regenerate, edit, earlier versions and export. Retry, regenerate and
// edit start a new turn in place of the tail of the conversation: the
// replaced messages are kept (GET …/replaced) but leave the conversation
// and the model's history.

// handleRenameConversation sets a conversation's title.
func (s *Server) handleRenameConversation(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	var req struct {
		Title *string `json:"title"`
	}
	if err := decodeJSON(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.Title == nil || strings.TrimSpace(*req.Title) == "" {
		s.writeError(w, r, toolmark.Errorf(toolmark.EINVALID, "title must not be empty"))
		return
	}
	c, err := s.cfg.Store.RenameConversation(r.Context(), u.ID, chi.URLParam(r, "id"), strings.TrimSpace(*req.Title))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversation": c})
}

// handleRetryTurn answers a failed, stopped or interrupted turn's question
// again; handleRegenerateTurn any finished turn's.
func (s *Server) handleRetryTurn(w http.ResponseWriter, r *http.Request) { s.again(w, r, true) }

func (s *Server) handleRegenerateTurn(w http.ResponseWriter, r *http.Request) { s.again(w, r, false) }

func (s *Server) again(w http.ResponseWriter, r *http.Request, retry bool) {
	u, _ := UserFromContext(r.Context())
	t, err := s.cfg.Store.GetTurn(r.Context(), u.ID, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	switch {
	case !t.Status.Final():
		s.writeError(w, r, toolmark.Errorf(toolmark.ECONFLICT, "the answer is still being written; stop it first"))
		return
	case retry && t.Status == toolmark.TurnCompleted:
		s.writeError(w, r, toolmark.Errorf(toolmark.ECONFLICT, "the answer completed; regenerate it instead"))
		return
	}
	var req struct {
		Model string `json:"model"` // optional: another model to answer
	}
	if r.ContentLength != 0 {
		if err := decodeJSON(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	q, err := s.cfg.Store.GetMessage(r.Context(), u.ID, t.UserMessageID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.replaceTail(w, r, u.ID, q, toolmark.TurnInput{Content: q.Content, Model: req.Model})
}

// handleEditMessage answers an edited question: the user message is
// replaced, with the answers after it.
func (s *Server) handleEditMessage(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	var req toolmark.TurnInput
	if err := decodeJSON(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	m, err := s.cfg.Store.GetMessage(r.Context(), u.ID, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if m.Role != toolmark.RoleUser {
		s.writeError(w, r, toolmark.Errorf(toolmark.EINVALID, "only a question can be edited; regenerate an answer instead"))
		return
	}
	s.replaceTail(w, r, u.ID, m, req)
}

// replaceTail starts a turn asking in in place of the user message q
// and everything after it.
func (s *Server) replaceTail(w http.ResponseWriter, r *http.Request, ownerID string, q toolmark.Message, in toolmark.TurnInput) {
	if q.ReplacedBy != "" && r.Header.Get("Idempotency-Key") == "" {
		s.writeError(w, r, toolmark.Errorf(toolmark.ECONFLICT, "this message was already replaced"))
		return
	}
	if err := s.keepQuestionFiles(r, q, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	t, err := s.startTurn(r, ownerID, q.ConversationID, in, q.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeTurnAccepted(w, t)
}

// keepQuestionFiles gives in, a question asked again in place of q, q's
// files, unless it names others ([] for none: an edit without them).
func (s *Server) keepQuestionFiles(r *http.Request, q toolmark.Message, in *toolmark.TurnInput) error {
	if in.Attachments != nil {
		return nil
	}
	atts, err := s.cfg.Store.MessageAttachments(r.Context(), []string{q.ID})
	for _, a := range atts[q.ID] {
		in.Attachments = append(in.Attachments, a.ID)
	}
	return err
}

// handleSelectVersion makes a question's version the conversation's
// version in its place: the branch follows it (store.SelectVersion).
func (s *Server) handleSelectVersion(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	m, err := s.cfg.Store.SelectVersion(r.Context(), u.ID, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"message": m})
}

// handleReplacedMessages lists the messages retries, regenerations and
// edits replaced: the earlier versions.
func (s *Server) handleReplacedMessages(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	ms, err := s.cfg.Store.ReplacedMessages(r.Context(), u.ID, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	views := make([]messageView, len(ms))
	for i, m := range ms {
		views[i] = messageView{Message: withSummary(m), ToolCalls: []toolmark.ToolCallRecord{}, Todos: []toolmark.Todo{}}
		if views[i].HTML, err = s.render(m); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": views})
}

// handleExportConversation answers a whole conversation as Markdown
// (?format=markdown, the default) or JSON (?format=json), as a download.
func (s *Server) handleExportConversation(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "markdown"
	}
	if format != "markdown" && format != "json" {
		s.writeError(w, r, toolmark.Errorf(toolmark.EINVALID, "format must be markdown or json"))
		return
	}
	c, msgs, err := s.wholeConversation(r, u.ID, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	name := fileName(c.Title)
	if format == "json" {
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.json"`)
		writeJSON(w, http.StatusOK, map[string]any{"conversation": c, "messages": msgs, "exportedAt": time.Now().UTC()})
		return
	}
	w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.md"`)
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(exportMarkdown(c, msgs)))
}

// wholeConversation reads every live message of a conversation, a page at
// a time from the end.
func (s *Server) wholeConversation(r *http.Request, ownerID, id string) (toolmark.Conversation, []messageView, error) {
	var pages [][]store.MessageEntry
	var c toolmark.Conversation
	for before := int64(0); ; {
		p, err := s.cfg.Store.OpenConversation(r.Context(), ownerID, id, before, store.MaxPageMessages)
		if err != nil {
			return c, nil, err
		}
		c = p.Conversation
		pages = append(pages, p.Messages)
		if !p.More {
			break
		}
		before = p.Messages[0].Pos
	}
	var out []messageView
	for i := len(pages) - 1; i >= 0; i-- {
		for _, e := range pages[i] {
			v := messageView{Message: withSummary(e.Message), ToolCalls: e.ToolCalls, Todos: e.Todos, Usage: e.Usage, Model: e.Model, Versions: e.Versions}
			if e.Role == toolmark.RoleAssistant && e.TurnStatus == toolmark.TurnFailed {
				v.Error = e.TurnError
			}
			out = append(out, v)
		}
	}
	if out == nil {
		out = []messageView{}
	}
	return c, out, s.addAttachments(r, out)
}

// fileName makes a download's name of a title: letters, digits and dashes.
func fileName(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
		if b.Len() >= 60 {
			break
		}
	}
	name := strings.Trim(b.String(), "-")
	if name == "" {
		name = "conversation"
	}
	return name
}
