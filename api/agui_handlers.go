package api

import (
	"cmp"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/toolmark/toolmark"
)

// handleAGUI runs an AG-UI agent run: RunAgentInput's threadId names one of
// the caller's conversations (created on first use), its runId the turn
// (through the turn's idempotency key, so a reconnect with the same
// threadId and runId streams the same run again from its start), its last
// user message is the question (text, image and document parts), and
// forwardedProps.model the model to answer. The turn goes on when the
// stream drops.
func (s *Server) handleAGUI(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	var in struct {
		ThreadID string `json:"threadId"`
		RunID    string `json:"runId"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		ForwardedProps json.RawMessage `json:"forwardedProps"`
	}
	if err := decodeProtocolJSON(w, r, s.protocolBodyBytes(), &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	if in.ThreadID == "" || in.RunID == "" || len(in.RunID) > 180 {
		s.writeError(w, r, toolmark.Errorf(toolmark.EINVALID, "threadId and runId must be set"))
		return
	}
	q := protocolQuestion{chatID: in.ThreadID}
	var err error
	if q.model, err = aguiModel(in.ForwardedProps); err != nil {
		s.writeError(w, r, err)
		return
	}
	if n := len(in.Messages); n > 0 && in.Messages[n-1].Role == "user" {
		if q.content, q.files, err = aguiQuestion(r, in.Messages[n-1].Content); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	if strings.TrimSpace(q.content) == "" {
		s.writeError(w, r, toolmark.Errorf(toolmark.EINVALID, "the last message must be the user's, with text"))
		return
	}
	r.Header.Set("Idempotency-Key", "ag-ui run "+in.RunID)
	if err := s.checkQuestion(r, u.ID, &q); err != nil {
		s.writeError(w, r, err)
		return
	}
	t, err := s.startQuestion(r, u.ID, q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.protocolStream(w, r, t, encoders["ag-ui"](t, in.RunID))
}

// aguiModel is forwardedProps.model: the id of the model to answer ("" when
// forwardedProps is absent, not an object or has no model).
func aguiModel(raw json.RawMessage) (string, error) {
	var props map[string]json.RawMessage
	if json.Unmarshal(raw, &props) != nil || props["model"] == nil {
		return "", nil
	}
	var model string
	if json.Unmarshal(props["model"], &model) != nil {
		return "", toolmark.Errorf(toolmark.EINVALID, "forwardedProps.model must be a model's id")
	}
	return model, nil
}

// aguiQuestion is a user message's content: a string, or parts whose text
// parts it joins and whose image and document parts are its files (their
// source inline base64 or a URL: a data: URL or an upload's). Audio, video
// and a provider's file handle are refused.
func aguiQuestion(r *http.Request, raw json.RawMessage) (string, []protocolFile, error) {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text, nil, nil
	}
	var parts []struct {
		Type   string
		Text   string
		Source struct{ Type, Value, MimeType string }
		// Metadata may name the file (filename or name).
		Metadata struct{ Filename, Name string }
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	var files []protocolFile
	for _, p := range parts {
		switch p.Type {
		case "text":
			b.WriteString(p.Text)
			continue
		case "image", "document":
		case "audio", "video":
			return "", nil, toolmark.Errorf(toolmark.EINVALID, "%s parts are not taken: send text, images and documents", p.Type)
		default:
			return "", nil, toolmark.Errorf(toolmark.EINVALID, "a part of an unknown type: send text, images and documents")
		}
		name := cmp.Or(p.Metadata.Filename, p.Metadata.Name, unnamedFile(p.Type, len(files), p.Source.MimeType))
		var f protocolFile
		var err error
		switch p.Source.Type {
		case "data":
			f = protocolFile{name: name}
			if f.data, err = decodeBase64(p.Source.Value); err != nil {
				err = toolmark.Errorf(toolmark.EINVALID, "file %q: %v", toolmark.CleanUploadName(name), err)
			}
		case "url":
			f, err = fileFromURL(r, name, p.Source.Value)
		default:
			err = toolmark.Errorf(toolmark.EINVALID, "file %q: send its bytes (a data source) or its /api/uploads URL", toolmark.CleanUploadName(name))
		}
		if err != nil {
			return "", nil, err
		}
		files = append(files, f)
	}
	return b.String(), files, nil
}
