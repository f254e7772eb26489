package api

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5/middleware"
	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
)

// StatusOf maps an error code to its HTTP status. It is the only place that
// does.
func StatusOf(code string) int {
	switch code {
	case toolmark.ENOTFOUND:
		return http.StatusNotFound
	case toolmark.EINVALID:
		return http.StatusBadRequest
	case toolmark.ECONFLICT:
		return http.StatusConflict
	case toolmark.EUNAUTHORIZED:
		return http.StatusUnauthorized
	case toolmark.ETOOLARGE:
		return http.StatusRequestEntityTooLarge
	case toolmark.EUNAVAILABLE:
		return http.StatusServiceUnavailable
	case toolmark.EUNSUPPORTED:
		return http.StatusUnsupportedMediaType
	}
	return http.StatusInternalServerError
}

// errorBody is the JSON shape of every error response.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// retryAfter is the Retry-After value, in seconds, of every 503 answer:
// about how long PostgreSQL takes to restart.
const retryAfter = 2

// writeError writes err as a JSON error response. An error that means the
// database is unreachable (store.Unavailable) is "unavailable": 503 with
// Retry-After, logged as a warning, never a 500. Other internal errors are
// logged with the request id and shown only as "internal error".
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code, msg := toolmark.ErrorCode(err), toolmark.ErrorMessage(err)
	if code == toolmark.EINTERNAL && store.Unavailable(err) {
		code, msg = store.ErrUnavailable.Code, store.ErrUnavailable.Message
	}
	switch code {
	case toolmark.EINTERNAL:
		s.log.Error("request failed", "err", err, "method", r.Method, "path", r.URL.Path,
			"request_id", middleware.GetReqID(r.Context()))
	case toolmark.EUNAVAILABLE:
		s.log.Warn("request refused: unavailable", "err", err, "method", r.Method, "path", r.URL.Path,
			"request_id", middleware.GetReqID(r.Context()))
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	case toolmark.EUNAUTHORIZED:
		w.Header().Set("WWW-Authenticate", `Bearer realm="toolmark"`)
	}
	var body errorBody
	body.Error.Code, body.Error.Message = code, msg
	writeJSON(w, StatusOf(code), body)
}

// writeJSON writes v with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if v == nil {
		return
	}
	enc := json.NewEncoder(w)
	if err := enc.Encode(v); err != nil {
		slog.Debug("writing response", "err", err)
	}
}
