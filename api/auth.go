package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/toolmark/toolmark"
)

// SessionCookie is the name of the cookie that carries a browser's token.
const SessionCookie = "toolmark_session"

type ctxKey int

const (
	userKey  ctxKey = iota
	takenKey        // *takenLog of logRequests (direct.go)
)

// UserFromContext returns the authenticated user of a request.
func UserFromContext(ctx context.Context) (toolmark.User, bool) {
	u, ok := ctx.Value(userKey).(toolmark.User)
	return u, ok
}

func withUser(ctx context.Context, u toolmark.User) context.Context {
	return context.WithValue(ctx, userKey, u)
}

// authenticate puts the request's user in its context: the local user in
// local mode; otherwise the owner of the bearer token or session cookie.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Auth == AuthLocal {
			next.ServeHTTP(w, r.WithContext(withUser(r.Context(), toolmark.User{ID: s.cfg.LocalUserID, Name: "local"})))
			return
		}
		token := bearerToken(r)
		if token == "" {
			if c, err := r.Cookie(SessionCookie); err == nil {
				token = c.Value
			}
		}
		if token == "" {
			s.writeError(w, r, toolmark.Errorf(toolmark.EUNAUTHORIZED, "authentication required: send Authorization: Bearer <token>"))
			return
		}
		u, err := s.cfg.Store.UserByToken(r.Context(), token)
		if err != nil {
			if code := toolmark.ErrorCode(err); code == toolmark.ENOTFOUND || code == toolmark.EUNAUTHORIZED || code == toolmark.EINVALID {
				err = toolmark.Errorf(toolmark.EUNAUTHORIZED, "the token is not valid")
			}
			s.writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(withUser(r.Context(), u)))
	})
}

func bearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// handleCreateSession exchanges a token for an HttpOnly, SameSite=Strict
// session cookie, since EventSource cannot send headers.
func (s *Server) handleCreateSession(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Auth == AuthLocal {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	var req struct {
		Token string `json:"token"`
	}
	if err := decodeJSON(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if _, err := s.cfg.Store.UserByToken(r.Context(), req.Token); err != nil {
		if code := toolmark.ErrorCode(err); code == toolmark.ENOTFOUND || code == toolmark.EUNAUTHORIZED || code == toolmark.EINVALID {
			err = toolmark.Errorf(toolmark.EUNAUTHORIZED, "the token is not valid")
		}
		s.writeError(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: req.Token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: int((30 * 24 * time.Hour).Seconds()),
	})
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleDeleteSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: -1})
	w.WriteHeader(http.StatusNoContent)
}
