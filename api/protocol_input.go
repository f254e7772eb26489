package api

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/toolmark/toolmark"
)

// A question of the AI SDK or AG-UI routes carries its model and its files
// in the protocol's own shape (aisdk_handlers.go, agui_handlers.go); here
// they become a toolmark.TurnInput. Everything is checked before anything
// is kept: the model (400 with the valid ids), each file's bytes (typed as
// POST /api/uploads types them: a 400 or 413 naming the file), the uploads
// named (another user's is a 404) and what the turn's model takes (400).

// protocolFile is a file a protocol message carries: its bytes, or the id
// of one of the caller's uploads.
type protocolFile struct {
	name     string // the client's name for it ("" for none)
	data     []byte // the bytes, when they came inline
	uploadID string // else the upload it names
}

// protocolQuestion is a protocol request's question, checked.
type protocolQuestion struct {
	chatID, content, model string
	files                  []protocolFile
	inline                 []uploadedFile // the typed bytes of the inline files, in order
}

// protocolBodyBytes bounds a protocol request's body: the usual bound plus
// room for two of the largest files base64-encoded (larger sets go through
// POST /api/uploads and are named by their URLs).
func (s *Server) protocolBodyBytes() int64 {
	return s.cfg.MaxBodyBytes + 2*int64(base64.StdEncoding.EncodedLen(int(s.cfg.MaxUploadBytes)))
}

// fileFromURL reads a file part's URL: a data: URL's bytes, or the id of an
// upload's URL (/api/uploads/{id}, relative or on this server).
func fileFromURL(r *http.Request, name, raw string) (protocolFile, error) {
	f := protocolFile{name: name}
	if strings.HasPrefix(strings.ToLower(raw), "data:") {
		data, err := decodeDataURL(raw)
		if err != nil {
			return f, toolmark.Errorf(toolmark.EINVALID, "file %q: %v", toolmark.CleanUploadName(name), err)
		}
		f.data = data
		return f, nil
	}
	var id string
	u, err := url.Parse(raw)
	if err == nil && (u.Scheme == "" || u.Scheme == "http" || u.Scheme == "https") && (u.Host == "" || u.Host == r.Host) && u.RawQuery == "" {
		if rest, ok := strings.CutPrefix(u.EscapedPath(), "/api/uploads/"); ok && !strings.Contains(rest, "/") {
			id = rest
		}
	}
	if id == "" {
		return f, toolmark.Errorf(toolmark.EINVALID, "file %q: only a data: URL or an /api/uploads/{id} URL of this server is taken", toolmark.CleanUploadName(name))
	}
	f.uploadID = id
	return f, nil
}

// decodeDataURL returns the bytes of a data: URL (RFC 2397), base64 or
// percent-encoded. Its media type is left aside: the bytes say what they are.
func decodeDataURL(s string) ([]byte, error) {
	head, body, ok := strings.Cut(s[len("data:"):], ",")
	if !ok {
		return nil, errors.New("malformed data: URL")
	}
	if strings.HasSuffix(strings.ToLower(head), ";base64") {
		return decodeBase64(body)
	}
	data, err := url.PathUnescape(body)
	if err != nil {
		return nil, errors.New("malformed data: URL")
	}
	return []byte(data), nil
}

// decodeBase64 decodes standard or URL-safe base64, padded or not.
func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	data, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		data, err = base64.RawURLEncoding.DecodeString(s)
	}
	if err != nil {
		return nil, errors.New("malformed base64")
	}
	return data, nil
}

// unnamedFile is the name of a file a client sent without one: its kind
// ("image", "document", "file") and its place, with the extension of the
// type it declared when that is a common one.
func unnamedFile(kind string, i int, declared string) string {
	ext := map[string]string{
		"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp", "application/pdf": ".pdf",
		"text/plain": ".txt", "text/markdown": ".md", "text/csv": ".csv", "application/json": ".json",
	}[strings.ToLower(strings.TrimSpace(strings.Split(declared, ";")[0]))]
	return fmt.Sprintf("%s-%d%s", kind, i+1, ext)
}

// checkQuestion checks a protocol question before anything is kept or
// started: its text, its model, its files' count and bytes, the uploads it
// names, and that the model answering it takes them; startQuestion checks
// none of it again.
func (s *Server) checkQuestion(r *http.Request, ownerID string, q *protocolQuestion) error {
	if err := s.checkRequest(r, q.content); err != nil {
		return err
	}
	if err := s.checkModel(q.model); err != nil {
		return err
	}
	if len(q.files) > s.cfg.MaxUploadsPerTurn {
		return toolmark.Errorf(toolmark.EINVALID, "a turn takes at most %d attachments", s.cfg.MaxUploadsPerTurn)
	}
	var ids []string
	var all []toolmark.Upload
	for _, f := range q.files {
		if f.uploadID != "" {
			ids = append(ids, f.uploadID)
			continue
		}
		typed, err := s.typeUpload(f.name, f.data)
		if err != nil {
			return err
		}
		q.inline = append(q.inline, typed)
		all = append(all, toolmark.Upload{Name: typed.name, MediaType: typed.mediaType, Size: int64(len(typed.data))})
	}
	if len(ids) > 0 {
		owned, err := s.cfg.Store.Uploads(r.Context(), ownerID, ids, false)
		if err != nil {
			return err
		}
		all = append(all, owned...)
	}
	if len(all) == 0 || len(s.cfg.Models) == 0 {
		return nil
	}
	m, err := s.turnModel(r, ownerID, q.chatID, q.model)
	if toolmark.ErrorCode(err) == toolmark.ENOTFOUND {
		m, err = s.cfg.Models.Default(), nil // a chat not started yet
	}
	if err != nil {
		return err
	}
	if err := s.readQuestionPDFs(r, ownerID, q, all, m); err != nil {
		return err
	}
	return toolmark.CheckAttachments(all, m)
}

// readQuestionPDFs reads, for a model that takes no documents, the text of
// the question's PDFs (all: its inline files, then the uploads it names),
// as a turn started with them would: an inline file's text is kept with it
// when it is kept, so that it is read once.
func (s *Server) readQuestionPDFs(r *http.Request, ownerID string, q *protocolQuestion, all []toolmark.Upload, m toolmark.ModelInfo) error {
	if m.Documents {
		return nil
	}
	for i := range q.inline {
		f := &q.inline[i]
		if toolmark.Kind(f.mediaType) != toolmark.KindDocument {
			continue
		}
		text, _, err := s.textOfPDF(r.Context(), f.name, f.data, m)
		if err != nil {
			return err
		}
		f.text, all[i].Text = &text, text
	}
	return s.readPDFTexts(r.Context(), ownerID, all[len(q.inline):], m)
}

// startQuestion starts the turn of a question checkQuestion passed in its
// chat's conversation (created on first use), after keeping its inline
// files. A file deleted since the check is refused by the store, which
// never writes a turn without a file it names.
func (s *Server) startQuestion(r *http.Request, ownerID string, q protocolQuestion) (toolmark.Turn, error) {
	if _, err := s.cfg.Store.EnsureConversation(r.Context(), ownerID, q.chatID, titleFrom(q.content)); err != nil {
		return toolmark.Turn{}, err
	}
	kept, err := s.keepUploads(r.Context(), ownerID, q.inline)
	if err != nil {
		return toolmark.Turn{}, err
	}
	in := toolmark.TurnInput{Content: q.content, Model: q.model}
	for _, f := range q.files {
		if f.uploadID == "" {
			f.uploadID, kept = kept[0].ID, kept[1:]
		}
		in.Attachments = append(in.Attachments, f.uploadID)
	}
	return s.createTurn(r, ownerID, q.chatID, in, "")
}
