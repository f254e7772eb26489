package api

import (
	"context"
	"errors"
	"strings"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/pdftext"
)

// readPDFTexts sets the Text of the PDFs among ups, which go as text to
// model m (it takes no documents): read once from the bytes and kept,
// then taken from the store. A PDF whose text cannot be read is refused
// here, before the turn starts, with why.
func (s *Server) readPDFTexts(ctx context.Context, ownerID string, ups []toolmark.Upload, m toolmark.ModelInfo) error {
	if m.Documents {
		return nil
	}
	for i, u := range ups {
		if toolmark.Kind(u.MediaType) != toolmark.KindDocument {
			continue
		}
		text, read, err := s.cfg.Store.UploadText(ctx, ownerID, u.ID)
		if err != nil {
			return err
		}
		if !read {
			if text, err = s.readPDFText(ctx, ownerID, u, m); err != nil {
				return err
			}
		}
		if text == "" {
			return toolmark.PDFTextError(u.Name, m.Label, "")
		}
		ups[i].Text = text
	}
	return nil
}

// readPDFText reads the text of an upload's PDF and keeps it (a PDF that
// has none, "", so that it is not read again; not one that took too long).
func (s *Server) readPDFText(ctx context.Context, ownerID string, u toolmark.Upload, m toolmark.ModelInfo) (string, error) {
	full, err := s.cfg.Store.GetUpload(ctx, ownerID, u.ID)
	if err != nil {
		return "", err
	}
	text, keep, readErr := s.textOfPDF(ctx, u.Name, full.Data, m)
	if keep {
		if err := s.cfg.Store.SetUploadText(ctx, u.ID, text); err != nil {
			return "", err
		}
	}
	return text, readErr
}

// textOfPDF reads the text of the PDF named name for model m, which takes
// no documents; keep says whether the result may be kept with the upload
// (not when reading took too long: another time it may not). A PDF whose
// text cannot be read is refused with why.
func (s *Server) textOfPDF(ctx context.Context, name string, data []byte, m toolmark.ModelInfo) (text string, keep bool, err error) {
	text, readErr := s.cfg.PDFText.Text(ctx, data, pdftext.Limits{MaxBytes: int(max(s.cfg.MaxUploadBytes, 1))})
	keep = !errors.Is(readErr, pdftext.ErrTooSlow)
	if readErr != nil {
		return "", keep, toolmark.PDFTextError(name, m.Label, readErr.Error())
	}
	if strings.TrimSpace(text) == "" {
		return "", keep, toolmark.PDFTextError(name, m.Label, "")
	}
	return text, keep, nil
}
