package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// decodeJSON reads a request body of at most max bytes holding exactly one
// JSON object into dst. It refuses other media types, invalid UTF-8, null
// and other values that are not objects, unknown fields and trailing data,
// each with a clear error.
func decodeJSON(w http.ResponseWriter, r *http.Request, max int64, dst any) error {
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return toolmark.Errorf(toolmark.EUNSUPPORTED, "the request body must be JSON (Content-Type: application/json)")
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return toolmark.Errorf(toolmark.ETOOLARGE, "the request body is larger than %d bytes", max)
		}
		return toolmark.Errorf(toolmark.EINVALID, "reading the request body: %v", err)
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return toolmark.Errorf(toolmark.EINVALID, "the request body is empty; send a JSON object")
	}
	if bytes.Equal(trimmed, []byte("null")) {
		// encoding/json decodes null into a struct as a no-op, which would
		// accept it as {}.
		return toolmark.Errorf(toolmark.EINVALID, "malformed JSON: the body must be a JSON object, not null")
	}
	if !utf8.Valid(raw) {
		return toolmark.Errorf(toolmark.EINVALID, "the request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return toolmark.Errorf(toolmark.EINVALID, "malformed JSON: %s", jsonProblem(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return toolmark.Errorf(toolmark.EINVALID, "malformed JSON: the body must hold exactly one JSON object")
	}
	return nil
}

// jsonProblem describes a decoding error without echoing Go type names.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("syntax error at byte %d", syn.Offset)
	case errors.As(err, &typ):
		if typ.Field != "" {
			return fmt.Sprintf("field %q has the wrong type (%s)", typ.Field, typ.Value)
		}
		return "the body must be a JSON object"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the body ends early"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	}
	return "the body is not a valid JSON object"
}

// parseCursor reads an event cursor: a decimal sequence number ≥ 0.
func parseCursor(s, what string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 {
		return 0, toolmark.Errorf(toolmark.EINVALID, "%s must be an event sequence number (a whole number ≥ 0), not %q", what, strings.ToValidUTF8(toolcallmarkup.Shorten(s, 40), "\uFFFD"))
	}
	return n, nil
}
