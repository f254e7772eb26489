package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"

	"github.com/toolmark/toolmark"
)

// File is a file to upload: its name (the server keeps it cleaned; its type
// comes from the bytes) and its bytes.
type File struct {
	Name string
	Data []byte
}

// Upload keeps files on the server for the user, to attach to turns: pass
// their ids as toolmark.TurnInput.Attachments to PostTurnInput. The same
// bytes uploaded again are the same upload. A type the server refuses, or
// a file past its limits, is an *APIError naming the file, and then none of
// the files is kept.
func (c *Client) Upload(ctx context.Context, files ...File) ([]toolmark.Upload, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, f := range files {
		w, err := mw.CreateFormFile("file", f.Name)
		if err != nil {
			return nil, fmt.Errorf("encoding %q: %w", f.Name, err)
		}
		_, _ = w.Write(f.Data)
	}
	if err := mw.Close(); err != nil {
		return nil, fmt.Errorf("encoding the upload: %w", err)
	}
	req, err := c.newRequest(ctx, http.MethodPost, "/api/uploads", &body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("POST /api/uploads: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return nil, decodeError(resp)
	}
	var out struct {
		Uploads []toolmark.Upload `json:"uploads"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("POST /api/uploads: decoding answer: %w", err)
	}
	return out.Uploads, nil
}

// DeleteUpload deletes one of the user's uploads. One that a stored
// question carries is kept while it does (an *APIError with status 409,
// code toolmark.ECONFLICT: delete its conversations first); another
// user's, or none, is a 404.
func (c *Client) DeleteUpload(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/api/uploads/"+url.PathEscape(id), nil, nil, nil)
}
