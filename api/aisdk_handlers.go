package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// The AI SDK's routes (aisdk_encoder.go has the stream's parts): a chat id
// the client chose names one of the caller's conversations.

// aiSDKMessage is a UIMessage as DefaultChatTransport sends it and as the
// history route returns it; parts are kept as they come.
type aiSDKMessage struct {
	ID    string            `json:"id"`
	Role  string            `json:"role"`
	Parts []json.RawMessage `json:"parts"`
}

// handleAISDKChat starts a turn from the last user message (or regenerates
// the last answer) and streams it as a UI message stream. The turn goes on
// when the stream drops.
func (s *Server) handleAISDKChat(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	var req struct {
		ID        string         `json:"id"`
		Messages  []aiSDKMessage `json:"messages"`
		Trigger   string         `json:"trigger"`
		MessageID string         `json:"messageId"`
		Model     string         `json:"model"` // a body field of the client's: the model to answer
	}
	if err := decodeProtocolJSON(w, r, s.protocolBodyBytes(), &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.ID == "" {
		s.writeError(w, r, toolmark.Errorf(toolmark.EINVALID, "id must name the chat"))
		return
	}
	var t toolmark.Turn
	var err error
	switch req.Trigger {
	case "", "submit-message":
		t, err = s.aiSDKSubmit(r, u.ID, protocolQuestion{chatID: req.ID, model: req.Model}, req.Messages)
	case "regenerate-message":
		t, err = s.aiSDKRegenerate(r, u.ID, req.ID, req.Model)
	default:
		err = toolmark.Errorf(toolmark.EINVALID, "trigger must be submit-message or regenerate-message")
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.aiSDKStream(w, r, t)
}

// aiSDKSubmit starts a turn with the text and the files of the last user
// message, in the chat's conversation, created on first use.
func (s *Server) aiSDKSubmit(r *http.Request, ownerID string, q protocolQuestion, msgs []aiSDKMessage) (toolmark.Turn, error) {
	if n := len(msgs); n > 0 && msgs[n-1].Role == "user" {
		var err error
		if q.content, q.files, err = aiSDKQuestion(r, msgs[n-1].Parts); err != nil {
			return toolmark.Turn{}, err
		}
	}
	if strings.TrimSpace(q.content) == "" {
		return toolmark.Turn{}, toolmark.Errorf(toolmark.EINVALID, "the last message must be the user's, with text")
	}
	if err := s.checkQuestion(r, ownerID, &q); err != nil {
		return toolmark.Turn{}, err
	}
	return s.startQuestion(r, ownerID, q)
}

// aiSDKRegenerate answers the chat's last user message again, with its
// files, by model ("": the conversation's).
func (s *Server) aiSDKRegenerate(r *http.Request, ownerID, chatID, model string) (toolmark.Turn, error) {
	msgs, err := s.cfg.Store.ListMessages(r.Context(), ownerID, chatID)
	if err != nil {
		return toolmark.Turn{}, err
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; m.Role == toolmark.RoleUser && m.ReplacedBy == "" {
			in := toolmark.TurnInput{Content: m.Content, Model: model}
			if err := s.keepQuestionFiles(r, m, &in); err != nil {
				return toolmark.Turn{}, err
			}
			return s.startTurn(r, ownerID, chatID, in, m.ID)
		}
	}
	return toolmark.Turn{}, toolmark.Errorf(toolmark.EINVALID, "the chat has no question to answer again")
}

// aiSDKQuestion is a UIMessage's text parts joined and its file parts
// ({type: "file", mediaType, filename, url}: a data: URL or an upload's).
func aiSDKQuestion(r *http.Request, parts []json.RawMessage) (string, []protocolFile, error) {
	var b strings.Builder
	var files []protocolFile
	for _, raw := range parts {
		var p struct{ Type, Text, MediaType, Filename, URL string }
		if json.Unmarshal(raw, &p) != nil {
			continue
		}
		switch p.Type {
		case "text":
			b.WriteString(p.Text)
		case "file":
			name := p.Filename
			if name == "" {
				name = unnamedFile("file", len(files), p.MediaType)
			}
			f, err := fileFromURL(r, name, p.URL)
			if err != nil {
				return "", nil, err
			}
			files = append(files, f)
		}
	}
	return b.String(), files, nil
}

// aiSDKStream writes turn t from its start as a UI message stream.
func (s *Server) aiSDKStream(w http.ResponseWriter, r *http.Request, t toolmark.Turn) {
	s.protocolStream(w, r, t, encoders["ai-sdk"](t, ""), aiSDKHeader, "v1")
}

// activeTurn returns the conversation's queued or running turn, if any.
func (s *Server) activeTurn(r *http.Request, ownerID, conversationID string) (toolmark.Turn, bool, error) {
	msgs, err := s.cfg.Store.ListMessages(r.Context(), ownerID, conversationID)
	if err != nil {
		return toolmark.Turn{}, false, err
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != toolmark.RoleAssistant || m.TurnID == "" || m.ReplacedBy != "" {
			continue
		}
		t, err := s.streamTurn(r.Context(), ownerID, m.TurnID)
		if err != nil {
			return toolmark.Turn{}, false, err
		}
		return t, !t.Status.Final(), nil
	}
	return toolmark.Turn{}, false, nil
}

// handleAISDKResume streams the chat's active turn from its start, or
// answers 204 when it has none (useChat's resume after a reload).
func (s *Server) handleAISDKResume(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	t, ok, err := s.activeTurn(r, u.ID, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !ok {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	s.aiSDKStream(w, r, t)
}

// handleAISDKStop cancels the chat's active turn; none is not an error.
func (s *Server) handleAISDKStop(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	t, ok, err := s.activeTurn(r, u.ID, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if ok {
		if t, err = s.cfg.Store.RequestCancel(r.Context(), u.ID, t.ID); err != nil {
			s.writeError(w, r, err)
			return
		}
		if !t.Status.Final() {
			s.cfg.Runner.Cancel(t.ID)
		}
	}
	w.WriteHeader(http.StatusAccepted)
}

// handleAISDKHistory returns the chat as UIMessage[]: text parts, each
// question's files as file parts (their /api/uploads URLs), and each
// answer's tool calls in their final state (a call a turn left unfinished
// as an error). The answer of a turn still active is left out: the resumed
// stream (useChat's resume) brings it from its start, and would otherwise
// append its text to the same message again.
func (s *Server) handleAISDKHistory(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	p, err := s.cfg.Store.OpenConversation(r.Context(), u.ID, chi.URLParam(r, "id"), 0, store.MaxPageMessages)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var questions []string
	for _, m := range p.Messages {
		if m.Role == toolmark.RoleUser {
			questions = append(questions, m.ID)
		}
	}
	files, err := s.cfg.Store.MessageAttachments(r.Context(), questions)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]map[string]any, 0, len(p.Messages))
	for _, m := range p.Messages {
		if m.Role == toolmark.RoleAssistant && m.Status == toolmark.MessageStreaming {
			continue // the active turn's answer: a client resumes its stream, which holds it whole
		}
		parts := aiSDKCallParts(m.ToolCalls)
		for _, f := range files[m.ID] { // a question's files, first as useChat puts them
			parts = append(parts, map[string]any{"type": "file", "mediaType": f.MediaType, "filename": f.Name, "url": f.URL})
		}
		if text := toolcallmarkup.Text(m.Content); text != "" {
			parts = append(parts, map[string]any{"type": "text", "text": text, "state": "done"})
		}
		if parts == nil {
			parts = []any{}
		}
		out = append(out, map[string]any{"id": m.ID, "role": string(m.Role), "parts": parts})
	}
	writeJSON(w, http.StatusOK, out)
}

// aiSDKCallParts is a stored answer's calls as final tool parts, then a
// data-subagent part for each sub-agent that made calls, listing them
// (as the live stream's last one of it does).
func aiSDKCallParts(calls []toolmark.ToolCallRecord) []any {
	var parts []any
	subagents := map[string]*aiSDKSubagent{}
	var order []string
	phase := map[string]string{} // a sub-agent's, from its call's final status
	for _, c := range calls {
		phase[c.ID] = "failed"
		if toolcallmarkup.Status(c.Status) == toolcallmarkup.StatusSuccess {
			phase[c.ID] = "completed"
		}
	}
	for _, c := range calls {
		parts = append(parts, aiSDKToolPart(c))
		if c.ParentID == "" {
			continue
		}
		sa := subagents[c.ParentID]
		if sa == nil {
			sa = &aiSDKSubagent{SubagentStatusData: toolmark.SubagentStatusData{ToolCallID: c.ParentID, Phase: phase[c.ParentID]}}
			subagents[c.ParentID] = sa
			order = append(order, c.ParentID)
		}
		sa.Calls = append(sa.Calls, aiSDKNested{ToolCallID: c.ID, Name: c.Name, Status: c.Status})
	}
	for _, id := range order {
		parts = append(parts, subagents[id].part())
	}
	return parts
}

// aiSDKToolPart is a stored call as a final tool part of a UIMessage.
func aiSDKToolPart(c toolmark.ToolCallRecord) map[string]any {
	var input any = map[string]any{}
	if len(c.Arguments) > 0 {
		_ = json.Unmarshal(c.Arguments, &input)
	}
	part := map[string]any{"type": "tool-" + c.Name, "toolCallId": c.ID, "input": input}
	if toolcallmarkup.Status(c.Status) == toolcallmarkup.StatusSuccess {
		part["state"], part["output"] = "output-available", map[string]any{"result": c.Result}
	} else {
		part["state"], part["errorText"] = "output-error", nonEmpty(c.Error, "The tool call was "+c.Status+".")
	}
	return part
}
