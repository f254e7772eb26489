package api

import (
	"context"

	"github.com/toolmark/toolmark"
)

// One way in for a file's bytes, however they came (a multipart part of
// POST /api/uploads, a data: URL of the AI SDK, an AG-UI part's base64):
// typeUpload bounds and types them, keepUploads stores them for the user.

// uploadedFile is a file's bytes, read and typed, not yet kept.
type uploadedFile struct {
	name, mediaType string
	data            []byte
	text            *string // a PDF's text, when it was read before the file was kept
}

// typeUpload types a file's bytes (toolmark.SniffUpload, never the name or
// a declared type) under its cleaned name: a file over MaxUploadBytes is a
// 413 and an unknown type a 400, each naming the file.
func (s *Server) typeUpload(name string, data []byte) (uploadedFile, error) {
	f := uploadedFile{name: toolmark.CleanUploadName(name)}
	if int64(len(data)) > s.cfg.MaxUploadBytes {
		return f, toolmark.Errorf(toolmark.ETOOLARGE, "file %q is larger than %d bytes", f.name, s.cfg.MaxUploadBytes)
	}
	f.data = data
	var err error
	f.mediaType, err = toolmark.SniffUpload(f.name, data)
	return f, err
}

// keepUploads stores typed files for the user (de-duplicated, within
// MaxUserUploadBytes in all), in order.
func (s *Server) keepUploads(ctx context.Context, ownerID string, files []uploadedFile) ([]toolmark.Upload, error) {
	out := make([]toolmark.Upload, 0, len(files))
	for _, f := range files {
		up, err := s.cfg.Store.CreateUpload(ctx, ownerID, f.name, f.mediaType, f.data, s.cfg.MaxUserUploadBytes)
		if err != nil {
			return nil, err
		}
		if f.text != nil {
			if err := s.cfg.Store.SetUploadText(ctx, up.ID, *f.text); err != nil {
				return nil, err
			}
		}
		out = append(out, up)
	}
	return out, nil
}
