package api

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/toolmark/toolmark"
)

// uploadsBody is the answer to POST /api/uploads: one entry a file, in the
// order they were sent.
type uploadsBody struct {
	Uploads []toolmark.Upload `json:"uploads"`
}

// handleCreateUploads keeps the files of a multipart request (every part
// with a file name) for the user: at most MaxUploadsPerTurn files of at
// most MaxUploadBytes each, within MaxUserUploadBytes in all. Each file's
// type comes from its bytes (toolmark.SniffUpload): another type is a 400
// naming the file, and then no file of the request is kept.
func (s *Server) handleCreateUploads(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	files, err := s.readUploads(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ups, err := s.keepUploads(r.Context(), u.ID, files)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, uploadsBody{Uploads: ups})
}

// readUploads reads and types the files of a multipart request.
func (s *Server) readUploads(w http.ResponseWriter, r *http.Request) ([]uploadedFile, error) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "multipart/form-data" {
		return nil, toolmark.Errorf(toolmark.EUNSUPPORTED, "send the files as multipart/form-data")
	}
	// The parts' headers and boundaries take little beside the files.
	max := int64(s.cfg.MaxUploadsPerTurn)*(s.cfg.MaxUploadBytes+16<<10) + 64<<10
	r.Body = http.MaxBytesReader(w, r.Body, max)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, toolmark.Errorf(toolmark.EINVALID, "malformed multipart body")
	}
	var files []uploadedFile
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, bodyError(err, max)
		}
		if p.FileName() == "" {
			continue
		}
		if len(files) == s.cfg.MaxUploadsPerTurn {
			return nil, toolmark.Errorf(toolmark.EINVALID, "at most %d files can be sent at once", s.cfg.MaxUploadsPerTurn)
		}
		f, err := s.readUpload(p, max)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
}

// readUpload reads and types one file part.
func (s *Server) readUpload(p *multipart.Part, max int64) (uploadedFile, error) {
	data, err := io.ReadAll(io.LimitReader(p, s.cfg.MaxUploadBytes+1))
	if err != nil {
		return uploadedFile{}, bodyError(err, max)
	}
	return s.typeUpload(p.FileName(), data)
}

// bodyError is the error for a request body that could not be read.
func bodyError(err error, max int64) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return toolmark.Errorf(toolmark.ETOOLARGE, "the request body is larger than %d bytes", max)
	}
	return toolmark.Errorf(toolmark.EINVALID, "malformed multipart body")
}

// handleGetUpload serves an upload's bytes to its owner (another user's
// upload is a 404). Only a raster image is shown inline; any other file
// (a PDF, text, an SVG or HTML kept as text) is a download, with nosniff
// and a sandbox policy, so that the page's origin never renders it.
func (s *Server) handleGetUpload(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	up, err := s.cfg.Store.GetUpload(r.Context(), u.ID, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	disposition, ct := "attachment", up.MediaType
	switch toolmark.Kind(up.MediaType) {
	case toolmark.KindImage:
		disposition = "inline"
	case toolmark.KindText:
		ct += "; charset=utf-8"
	}
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Content-Disposition", contentDisposition(disposition, up.Name))
	h.Set("Cache-Control", "private, max-age=86400, immutable")
	_, _ = w.Write(up.Data)
}

// contentDisposition is a Content-Disposition header for a file name that
// is hostile text (mime.FormatMediaType quotes or RFC 2231-encodes it).
func contentDisposition(disposition, name string) string {
	if v := mime.FormatMediaType(disposition, map[string]string{"filename": name}); v != "" {
		return v
	}
	return disposition
}

// handleDeleteUpload deletes one of the user's uploads: 204; another
// user's is a 404, one a stored question carries a 409 (see
// store.DB.DeleteUpload).
func (s *Server) handleDeleteUpload(w http.ResponseWriter, r *http.Request) {
	u, _ := UserFromContext(r.Context())
	if err := s.cfg.Store.DeleteUpload(r.Context(), u.ID, chi.URLParam(r, "id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// checkAttachments refuses, before a turn starts, attachments that are not
// the owner's uploads (404 naming the id), too many of them, and files the
// turn's model cannot take (400 naming the file and why).
func (s *Server) checkAttachments(r *http.Request, ownerID, conversationID string, in toolmark.TurnInput) error {
	if len(in.Attachments) == 0 {
		return nil
	}
	if len(in.Attachments) > s.cfg.MaxUploadsPerTurn {
		return toolmark.Errorf(toolmark.EINVALID, "a turn takes at most %d attachments", s.cfg.MaxUploadsPerTurn)
	}
	ups, err := s.cfg.Store.Uploads(r.Context(), ownerID, in.Attachments, false)
	if err != nil {
		return err
	}
	if len(s.cfg.Models) == 0 {
		return nil
	}
	m, err := s.turnModel(r, ownerID, conversationID, in.Model)
	if err != nil {
		return err
	}
	if err := s.readPDFTexts(r.Context(), ownerID, ups, m); err != nil {
		return err
	}
	return toolmark.CheckAttachments(ups, m)
}

// turnModel is the model that will answer a turn naming model ("": the
// conversation's latest, else the default), as startTurn's store.NewTurn
// picks it.
func (s *Server) turnModel(r *http.Request, ownerID, conversationID, model string) (toolmark.ModelInfo, error) {
	if model == "" {
		c, err := s.cfg.Store.GetConversation(r.Context(), ownerID, conversationID)
		if err != nil {
			return toolmark.ModelInfo{}, err
		}
		model = c.Model
	}
	if m, ok := s.cfg.Models.Find(model); ok {
		return m, nil
	}
	return s.cfg.Models.Default(), nil
}

// addAttachments adds to the questions among views the files attached to
// them (one query).
func (s *Server) addAttachments(r *http.Request, views []messageView) error {
	var ids []string
	for _, v := range views {
		if v.Role == toolmark.RoleUser {
			ids = append(ids, v.ID)
		}
	}
	atts, err := s.cfg.Store.MessageAttachments(r.Context(), ids)
	for i := range views {
		views[i].Attachments = atts[views[i].ID]
	}
	return err
}
