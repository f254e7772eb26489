package openaiwire

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent/modelerr"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// ErrStreamCut means the response stream ended before the model finished.
// A cut stream is a *modelerr.Error of code stream_cut wrapping it.
var ErrStreamCut = errors.New("openaiwire: stream ended before the response was complete")

// cut returns the error of a stream that ended early, for why.
func cut(why error) error {
	if why == nil {
		return modelerr.New(toolmark.ESTREAMCUT, ErrStreamCut)
	}
	return modelerr.New(toolmark.ESTREAMCUT, fmt.Errorf("%w: %w", ErrStreamCut, why))
}

// errorBody is an error answer in any of the shapes servers use:
// {"error": {"message", "type", "code"}} (OpenAI, llama.cpp),
// {"error": "text"} (Ollama) or {"object": "error", "message", "type",
// "code"} (vLLM); Gemini sends a one-element array of the first.
type errorBody struct {
	Error   json.RawMessage `json:"error"`
	Object  string          `json:"object"`
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    any             `json:"code"`
}

// apiError returns the error the body describes, or nil: status 0 for an
// error inside the stream.
func (b errorBody) apiError(status int, retryAfter time.Duration) *modelerr.Error {
	var typ, code, msg string
	var inner struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	}
	var text string
	switch {
	case len(b.Error) > 0 && json.Unmarshal(b.Error, &inner) == nil && inner.Message != "":
		msg, typ = inner.Message, inner.Type
		if inner.Code != nil {
			code = fmt.Sprint(inner.Code)
		}
	case len(b.Error) > 0 && json.Unmarshal(b.Error, &text) == nil && text != "":
		msg = text
	case b.Object == "error":
		msg, typ = b.Message, b.Type
		if b.Code != nil {
			code = fmt.Sprint(b.Code)
		}
	default:
		return nil
	}
	if status == 0 {
		return modelerr.FromType(typ, code, msg)
	}
	return modelerr.FromHTTP(status, typ, code, msg, retryAfter)
}

// readAPIError classifies an error answer of the server.
func readAPIError(resp *http.Response) *modelerr.Error {
	defer resp.Body.Close()
	wait := modelerr.RetryAfter(resp.Header, time.Now())
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var b errorBody
	if json.Unmarshal(raw, &b) == nil {
		if e := b.apiError(resp.StatusCode, wait); e != nil {
			return e
		}
	}
	var list []errorBody // Gemini's OpenAI compatibility: [{"error": {"code", "message", "status"}}]
	if json.Unmarshal(raw, &list) == nil && len(list) > 0 {
		if e := list[0].apiError(resp.StatusCode, wait); e != nil {
			return e
		}
	}
	return modelerr.FromHTTP(resp.StatusCode, "", "", toolcallmarkup.Shorten(strings.TrimSpace(string(raw)), 300), wait)
}
