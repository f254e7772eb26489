// Package testserver starts a complete toolmark server for tests: a fresh
// migrated database from pgtest, the runner, the API and the embedded page,
// on a loopback port, with the offline demo model. It is the server users
// run, wired by package app.
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestX(t *testing.T) {
//		srv := testserver.Start(t, testserver.Options{})
//		resp, err := http.Get(srv.URL + "/api/info")
//		…
//	}
//
// Tests that run the toolmark binary itself as a child process get it from
// Binary, built once per test binary and removed by Main, and may collect
// its output in a Buffer.
package testserver

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolmark/toolmark/internal/app"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/simplifiedagent/mcptools"
	"github.com/toolmark/toolmark/store"
)

// Options configure a test server.
type Options struct {
	DemoDelay time.Duration // pause between demo chunks; 0 means none
	Auth      string        // "local" (default) or "token"
	MaxTurns  int
	LeaseTTL  time.Duration // default 2s, so sweeps are quick in tests
	Heartbeat time.Duration
	Logger    *slog.Logger // default: discards unless TOOLMARK_TEST_LOG is set
	// ContextChars is the history budget before compaction (0: default).
	ContextChars int
	// DB makes the server share a database with another test server, as
	// replicas do; nil gives it a fresh one.
	DB *store.DB
	// FetchAllow lists addresses fetch_url may reach although private
	// (a loopback page server of the test, say).
	FetchAllow []netip.Prefix
	// Grace is how long running turns get to finish at shutdown [5s].
	Grace time.Duration
	// SendBuffer, when > 0, is the send buffer (SO_SNDBUF) of the
	// server's sockets, so that a client that stops reading fills one soon.
	SendBuffer int
	// StreamWriteTimeout closes a stream whose client took nothing for
	// that long [60s].
	StreamWriteTimeout time.Duration
	// Model overrides the model (Provider "openai" with BaseURL of a local
	// fixture server, for example).
	Model *app.ModelConfig
	// Models are the models the server offers (app.Config.Models).
	Models []app.ModelConfig
	// MCP is the MCP servers whose tools the agent gets (nil: none).
	MCP *mcptools.Config
	// Uploads bounds uploads (zero: the defaults).
	Uploads app.UploadLimits
}

// Server is a running test server.
type Server struct {
	URL string // http://127.0.0.1:PORT
	App *app.App
	DB  *store.DB

	stop     context.CancelFunc
	done     chan error
	stopOnce sync.Once
	stopErr  error
}

// Stop shuts the server down as a SIGTERM does (drain, then close) and
// returns what Serve returned; the test's end does it too.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		s.stop()
		s.stopErr = <-s.done
		s.App.Close()
	})
	return s.stopErr
}

// SocketOption returns a net.Dialer's or net.ListenConfig's Control that
// sets the socket-level option opt (syscall.SO_SNDBUF, SO_RCVBUF) to value.
func SocketOption(opt, value int) func(network, address string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, opt, value)
		}); err != nil {
			return err
		}
		return serr
	}
}

// Start starts a server that stops when the test ends.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	db := opts.DB
	if db == nil {
		db = pgtest.New(tb)
	}
	log := opts.Logger
	if log == nil {
		w := io.Discard
		if os.Getenv("TOOLMARK_TEST_LOG") != "" {
			w = os.Stderr
		}
		log = slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if opts.LeaseTTL == 0 {
		opts.LeaseTTL = 2 * time.Second
	}
	model := app.ModelConfig{Provider: "demo", DemoDelay: opts.DemoDelay}
	if opts.DemoDelay == 0 {
		model.DemoDelay = -1
	}
	if opts.Model != nil {
		model = *opts.Model
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.Open(ctx, app.Config{
		DB: db, Auth: opts.Auth, Model: model, MaxTurns: opts.MaxTurns, LeaseTTL: opts.LeaseTTL,
		Heartbeat: opts.Heartbeat, StreamWriteTimeout: opts.StreamWriteTimeout, ContextChar: opts.ContextChars, Logger: log, FetchAllow: opts.FetchAllow,
		MCP: opts.MCP, Uploads: opts.Uploads, Models: opts.Models,
	})
	if err != nil {
		cancel()
		tb.Fatalf("opening the app: %v", err)
	}
	if err := a.Start(ctx); err != nil {
		cancel()
		tb.Fatalf("starting the app: %v", err)
	}
	var lc net.ListenConfig
	if opts.SendBuffer > 0 {
		lc.Control = SocketOption(syscall.SO_SNDBUF, opts.SendBuffer)
	}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		tb.Fatalf("listening: %v", err)
	}
	if opts.Grace == 0 {
		opts.Grace = 5 * time.Second
	}
	srv := &Server{URL: "http://" + ln.Addr().String(), App: a, DB: db, stop: cancel, done: make(chan error, 1)}
	go func() { srv.done <- a.Serve(ctx, ln, opts.Grace) }()
	tb.Cleanup(func() {
		if err := srv.Stop(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			tb.Errorf("serving: %v", err)
		}
	})
	return srv
}
