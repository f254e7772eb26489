package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/toolmark/toolmark"
)

// handleAGUI runs an AG-UI agent run: RunAgentInput's threadId names one of
// the caller's conversations (created on first use), its runId the turn
// (through the turn's idempotency key, so a reconnect with the same
// threadId and runId streams the same run again from its start), and its
// last user message is the question. The turn goes on when the stream
// drops.
func (s *Server) handleAGUI(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	var in struct {
		ThreadID string `json:"threadId"`
		RunID    string `json:"runId"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := decodeProtocolJSON(w, r, s.cfg.MaxBodyBytes, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	if in.ThreadID == "" || in.RunID == "" || len(in.RunID) > 180 {
		s.writeError(w, r, toolmark.Errorf(toolmark.EINVALID, "threadId and runId must be set"))
		return
	}
	var content string
	if n := len(in.Messages); n > 0 && in.Messages[n-1].Role == "user" {
		content = aguiText(in.Messages[n-1].Content)
	}
	if strings.TrimSpace(content) == "" {
		s.writeError(w, r, toolmark.Errorf(toolmark.EINVALID, "the last message must be the user's, with text"))
		return
	}
	if _, err := s.cfg.Store.EnsureConversation(r.Context(), u.ID, in.ThreadID, titleFrom(content)); err != nil {
		s.writeError(w, r, err)
		return
	}
	r.Header.Set("Idempotency-Key", "ag-ui run "+in.RunID)
	t, err := s.startTurn(r, u.ID, in.ThreadID, toolmark.TurnInput{Content: content}, "")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.protocolStream(w, r, t, encoders["ag-ui"](t, in.RunID))
}

// aguiText is the text of a user message's content: a string, or input
// parts whose text parts it joins.
func aguiText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct{ Type, Text string }
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
