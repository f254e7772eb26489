package api

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/pdftext"
	"github.com/toolmark/toolmark/runner"
	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/store"
)

// Auth modes.
const (
	AuthLocal = "local" // one local user, no credentials, loopback only
	AuthToken = "token" // bearer tokens or the session cookie
)

// Info is what GET /api/info tells clients about the server.
type Info struct {
	Model   string `json:"model"`
	Demo    bool   `json:"demo"`
	Auth    string `json:"auth"`
	Version string `json:"version"`
	// Documents is how many documents the knowledge base holds (0 tells
	// the page to say how to load some); absent when unknown.
	Documents *int `json:"documents,omitempty"`
	// Texts are the statuses a client shows before a turn's first frame
	// tells it more, so no client keeps a copy of them.
	Texts StatusTexts `json:"texts"`
}

// StatusTexts are the words of package statustext a client needs before
// the server has said anything about a turn.
type StatusTexts struct {
	Thinking string `json:"thinking"` // a turn just sent
}

// Metrics is what a Server counts and serves at /metrics (package
// internal/metrics implements it for Prometheus).
type Metrics interface {
	Handler() http.Handler
	StreamOpened()
	StreamClosed()
}

type noMetrics struct{}

func (noMetrics) Handler() http.Handler { return http.NotFoundHandler() }
func (noMetrics) StreamOpened()         {}
func (noMetrics) StreamClosed()         {}

// Config configures a Server. Zero values take the defaults in brackets.
type Config struct {
	Store   *store.DB
	Runner  *runner.Runner
	Render  func(content string) (string, error) // markdown to safe HTML
	Logger  *slog.Logger
	Metrics Metrics      // optional
	Web     http.Handler // the page at /; optional
	Tools   func() Tools // what GET /api/tools lists; optional
	// Models are the models a turn may name (GET /api/models), the
	// default among them; empty, the server's one model answers every turn.
	Models toolmark.Models

	Auth        string // AuthLocal or AuthToken [AuthLocal]
	LocalUserID string // the user of AuthLocal
	Info        Info

	MaxBodyBytes    int64 // [1 MiB]
	MaxMessageBytes int   // longest user message [64 KiB]
	// Uploads (POST /api/uploads): the largest file [20 MiB], the most
	// files a request or a turn takes [10], and the most bytes a user keeps
	// in all [500 MiB].
	MaxUploadBytes     int64
	MaxUploadsPerTurn  int
	MaxUserUploadBytes int64
	Heartbeat          time.Duration // comment line on idle streams [15s]
	// StreamWriteTimeout is how long a stream's write may wait for its
	// client to take bytes before the stream is closed [60s]: a client that
	// stopped reading holds no goroutine, and one that comes back resumes
	// with Last-Event-ID.
	StreamWriteTimeout time.Duration
	// StreamWrites is who writes the events of a follower that caught up:
	// StreamWritesHub [default] or StreamWritesFollower (direct.go).
	StreamWrites string
	// PDFText reads the text of a PDF for a model that takes no documents:
	// a child process running pdftext.Serve, or in this process when empty.
	PDFText pdftext.Command
}

// Server serves the HTTP API.
type Server struct {
	cfg    Config
	log    *slog.Logger
	router chi.Router
	// closingCtx ends with CloseStreams: streams wait on its Done, parked
	// ones, which wait in no select, on an AfterFunc (direct_park.go).
	closingCtx  context.Context
	stopClosing context.CancelFunc
	draining    atomic.Bool

	// The streams taken over from net/http (direct.go).
	takeMu    sync.Mutex
	taken     map[*takenStream]struct{}
	takeEnded bool // StreamsClosed ran
	takeWG    sync.WaitGroup

	watch watchers // the conversations' watch streams (conversation_watch.go)
}

// errDraining answers what a draining server no longer takes.
var errDraining = toolmark.Errorf(toolmark.EUNAVAILABLE, "the server is shutting down; try again shortly")

// Drain makes the server unready (/readyz 503) and refuses new turns and
// new event streams with 503, so that clients go to another replica;
// streams already open go on until CloseStreams.
func (s *Server) Drain() { s.draining.Store(true) }

// New returns a Server with its routes.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = noMetrics{}
	}
	if cfg.Auth == "" {
		cfg.Auth = AuthLocal
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = 64 << 10
	}
	if cfg.MaxUploadBytes <= 0 {
		cfg.MaxUploadBytes = 20 << 20
	}
	if cfg.MaxUploadsPerTurn <= 0 {
		cfg.MaxUploadsPerTurn = 10
	}
	if cfg.MaxUserUploadBytes <= 0 {
		cfg.MaxUserUploadBytes = 500 << 20
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = 15 * time.Second
	}
	if cfg.StreamWriteTimeout <= 0 {
		cfg.StreamWriteTimeout = 60 * time.Second
	}
	switch cfg.StreamWrites {
	case "":
		cfg.StreamWrites = StreamWritesHub
	case StreamWritesHub, StreamWritesFollower:
	default:
		panic(fmt.Sprintf("api: unknown StreamWrites %q", cfg.StreamWrites))
	}
	if cfg.Render == nil {
		cfg.Render = func(string) (string, error) { return "", nil }
	}
	cfg.Info.Auth = cfg.Auth
	cfg.Info.Texts = StatusTexts{Thinking: statustext.Thinking}
	s := &Server{cfg: cfg, log: cfg.Logger.With("component", "api"), taken: make(map[*takenStream]struct{})}
	s.closingCtx, s.stopClosing = context.WithCancel(context.Background())
	s.router = s.routes()
	if cfg.Runner != nil { // the turns started on other replicas reach the watchers here too
		cfg.Runner.OnTurnStarted(s.watch.publish, s.watch.conversations)
	}
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.router.ServeHTTP(w, r) }

// CloseStreams ends every open event stream (at shutdown, so that
// http.Server.Shutdown does not wait for them). Clients resume elsewhere
// or after the restart with Last-Event-ID.
func (s *Server) CloseStreams() { s.stopClosing() }

func (s *Server) routes() chi.Router {
	r := chi.NewRouter()
	r.Use(middleware.RequestID, s.logRequests, s.recoverPanics, compress())
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, toolmark.Errorf(toolmark.ENOTFOUND, "no such route: %s %s", r.Method, r.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{Error: struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}{Code: "method_not_allowed", Message: fmt.Sprintf("%s is not allowed on %s", r.Method, r.URL.Path)}})
	})
	r.Get("/healthz", s.handleHealthz)
	r.Get("/readyz", s.handleReadyz)
	r.Handle("/metrics", s.cfg.Metrics.Handler())
	r.Route("/api", func(r chi.Router) {
		r.Use(s.checkHost)
		r.Post("/session", s.handleCreateSession)
		r.Delete("/session", s.handleDeleteSession)
		r.Group(func(r chi.Router) {
			r.Use(s.authenticate)
			r.Get("/info", s.handleInfo)
			r.Get("/tools", s.handleTools)
			r.Get("/models", s.handleModels)
			r.Post("/conversations", s.handleCreateConversation)
			r.Get("/conversations", s.handleListConversations)
			r.Get("/conversations/{id}", s.handleGetConversation)
			r.Patch("/conversations/{id}", s.handleRenameConversation)
			r.Get("/conversations/{id}/replaced", s.handleReplacedMessages)
			r.Get("/conversations/{id}/export", s.handleExportConversation)
			r.Get("/conversations/{id}/events", s.handleConversationEvents)
			r.Post("/turns/{id}/retry", s.handleRetryTurn)
			r.Post("/turns/{id}/regenerate", s.handleRegenerateTurn)
			r.Post("/messages/{id}/edit", s.handleEditMessage)
			r.Post("/messages/{id}/select", s.handleSelectVersion)
			r.Delete("/conversations/{id}", s.handleDeleteConversation)
			r.Post("/conversations/{id}/turns", s.handleCreateTurn)
			r.Get("/turns/{id}", s.handleGetTurn)
			r.Get("/turns/{id}/events", s.handleTurnEvents)
			r.Get("/turns/{id}/tool-calls/{callId}/images/{n}", s.handleToolImage)
			r.Post("/turns/{id}/cancel", s.handleCancelTurn)
			r.Post("/uploads", s.handleCreateUploads)
			r.Get("/uploads/{id}", s.handleGetUpload)
			r.Delete("/uploads/{id}", s.handleDeleteUpload)
			r.Post("/chat", s.handleChat)
			r.Post("/ai-sdk/chat", s.handleAISDKChat)
			r.Get("/ai-sdk/chat/{id}", s.handleAISDKHistory)
			r.Get("/ai-sdk/chat/{id}/stream", s.handleAISDKResume)
			r.Post("/ai-sdk/chat/{id}/stop", s.handleAISDKStop)
			r.Post("/ag-ui", s.handleAGUI)
		})
	})
	if s.cfg.Web != nil {
		r.Group(func(r chi.Router) {
			r.Use(s.checkHost)
			r.Handle("/*", s.cfg.Web)
		})
	}
	return r
}

// logRequests logs each request when it ends.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		start := time.Now()
		line := func(status int, bytes int64) {
			s.log.Info("request", "method", r.Method, "path", r.URL.Path, "status", status,
				"bytes", bytes, "duration", time.Since(start), "request_id", middleware.GetReqID(r.Context()))
		}
		// What a stream that took its connection over wrote; a stream
		// that outlives the handler writes the line itself at its end.
		taken := &takenLog{line: line}
		next.ServeHTTP(ww, r.WithContext(context.WithValue(r.Context(), takenKey, taken)))
		switch {
		case taken.detached.Load():
		case taken.status != 0:
			line(taken.status, taken.bytes)
		default:
			line(ww.Status(), int64(ww.BytesWritten()))
		}
	})
}

// recoverPanics turns a handler's panic into a logged 500 (when nothing was
// written yet) instead of a dropped connection.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		defer func() {
			p := recover()
			if p == nil || p == http.ErrAbortHandler {
				if p != nil {
					panic(p)
				}
				return
			}
			s.log.Error("handler panicked", "panic", p, "method", r.Method, "path", r.URL.Path,
				"request_id", middleware.GetReqID(r.Context()), "stack", string(debug.Stack()))
			if ww.Status() == 0 {
				s.writeError(ww, r, fmt.Errorf("panic: %v", p))
			}
		}()
		next.ServeHTTP(ww, r)
	})
}

// checkHost refuses, in local mode, requests whose Host is not a loopback
// name: a web page elsewhere cannot reach the local server through DNS
// rebinding.
func (s *Server) checkHost(next http.Handler) http.Handler {
	if s.cfg.Auth != AuthLocal {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !IsLoopbackHost(r.Host) {
			s.writeError(w, r, toolmark.Errorf(toolmark.EUNAUTHORIZED, "in local mode the server answers only requests addressed to localhost"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// IsLoopbackHost reports whether hostport names this machine: localhost or
// a loopback address, with or without a port.
func IsLoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		s.writeError(w, r, errDraining)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	if err := s.cfg.Store.Ready(ctx); err != nil {
		s.log.Warn("not ready", "err", err)
		s.writeError(w, r, toolmark.Errorf(toolmark.EUNAVAILABLE, "not ready: %s", toolmark.ErrorMessage(err)))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

func (s *Server) handleInfo(w http.ResponseWriter, r *http.Request) {
	info := s.cfg.Info
	if n, err := s.cfg.Store.CountDocuments(r.Context()); err == nil {
		info.Documents = &n
	}
	writeJSON(w, http.StatusOK, info)
}
