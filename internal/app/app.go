// Package app wires toolmark together: the database (an embedded server
// when no URL is given), migrations, the model and tools, the runner and the
// HTTP API. `toolmark serve` and the test server both build on it, so what
// the tests run is what users run.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/api"
	"github.com/toolmark/toolmark/api/web"
	"github.com/toolmark/toolmark/internal/embeddedpg"
	"github.com/toolmark/toolmark/internal/metrics"
	"github.com/toolmark/toolmark/markdown"
	"github.com/toolmark/toolmark/runner"
	"github.com/toolmark/toolmark/simplifiedagent"
	"github.com/toolmark/toolmark/simplifiedagent/demo"
	"github.com/toolmark/toolmark/simplifiedagent/mcptools"
	"github.com/toolmark/toolmark/store"
)

// Version is the version reported by /api/info; set at link time.
var Version = "dev"

// ModelConfig selects the model. Provider "" or "demo" is the offline demo
// model.
type ModelConfig struct {
	ID         string // what a turn names it by ("" with one model: its name, or "demo")
	Label      string // what people see ("" for the id)
	Images     bool   // takes images
	Documents  bool   // takes documents (PDF) as they are
	Default    bool   // answers a turn that names no model in a conversation without one
	Provider   string // "demo", "openai" (any OpenAI-compatible server), "azure" (Azure OpenAI), "anthropic" or "mistral"
	BaseURL    string // the server's address; Azure OpenAI: the resource's endpoint
	APIKey     string
	Name       string // the model; Azure OpenAI: the deployment
	APIVersion string // Azure OpenAI only: the API version ("" for a default)
	// Retry is how failed model calls are tried again (zero: the defaults
	// of simplifiedagent.RetryPolicy).
	Retry     simplifiedagent.RetryPolicy
	DemoDelay time.Duration // pause between the demo model's chunks; <0 means none
	Demo      demo.Config   // the demo model's load knobs (tools per turn, answer length)
}

// Config configures an App. Zero values take sensible defaults.
type Config struct {
	DatabaseURL string // "" starts an embedded PostgreSQL in DataDir
	// DatabaseDirectURL is a direct (session) connection to the database
	// of DatabaseURL, when that one may go through a pooler in
	// transaction mode: LISTEN, liveness locks and migrations use it.
	DatabaseDirectURL string
	DB                *store.DB // an open, migrated store to use instead (tests)
	DataDir           string    // the embedded server's data directory
	Auth              string    // api.AuthLocal or api.AuthToken
	Model             ModelConfig
	// Models are the models a server offers (toolmark serve --models);
	// empty, Model is the only one. Retry, DemoDelay and Demo of Model
	// apply to them all.
	Models     []ModelConfig
	SearxNGURL string         // enables web_search
	FetchAllow []netip.Prefix // addresses fetch_url may reach despite the SSRF rules
	MaxTurns   int
	LeaseTTL   time.Duration
	Retention  time.Duration
	MaxMessage int // longest user message in bytes
	// Uploads is the uploads' limits (api.Config's MaxUploadBytes,
	// MaxUploadsPerTurn, MaxUserUploadBytes; zero: their defaults).
	Uploads   UploadLimits
	Heartbeat time.Duration // SSE keep-alive interval
	// StreamWriteTimeout closes a stream whose client took no bytes for
	// that long [60s] (api.Config.StreamWriteTimeout).
	StreamWriteTimeout time.Duration
	// StreamWrites is who writes a caught-up follower's events:
	// api.StreamWritesHub (default) or api.StreamWritesFollower.
	StreamWrites string
	// PDFText is the command that reads PDFs' text in a child process
	// (api.Config.PDFText; "toolmark pdftext"); empty: in the server.
	PDFText     []string
	ContextChar int // history budget in characters before compaction
	// MCP is the operator's MCP servers (nil for none): their tools join
	// the built-in ones.
	MCP    *mcptools.Config
	Logger *slog.Logger
}

// App is a running toolmark server's parts.
type App struct {
	cfg     Config
	log     *slog.Logger
	pg      *embeddedpg.Server
	DB      *store.DB
	Runner  *runner.Runner
	API     *api.Server
	Metrics *metrics.Metrics
	ownDB   bool
	mcp     *mcptools.Manager
}

// Open connects to (or starts) the database, applies migrations and builds
// the runner and the API. Call Start, then Serve; Close releases it all.
func Open(ctx context.Context, cfg Config) (*App, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Auth == "" {
		cfg.Auth = api.AuthLocal
	}
	a := &App{cfg: cfg, log: cfg.Logger, Metrics: metrics.New()}
	if err := a.openDB(ctx); err != nil {
		a.Close()
		return nil, err
	}
	localUser := ""
	if cfg.Auth == api.AuthLocal {
		u, err := a.DB.EnsureUser(ctx, "local")
		if err != nil {
			a.Close()
			return nil, fmt.Errorf("creating the local user: %w", err)
		}
		localUser = u.ID
	}
	ag, err := newAgent(cfg, a.DB)
	if err != nil {
		a.Close()
		return nil, err
	}
	a.mcp = ag.mcp
	ag.mcp.Start(ctx)
	if ag.demo {
		n, err := seedCorpus(ctx, a.DB)
		if err != nil {
			a.Close()
			return nil, err
		}
		a.log.Info("demo knowledge base ready", "documents", n)
	} else if n, err := a.DB.CountDocuments(ctx); err == nil && n == 0 {
		a.log.Warn("the knowledge base is empty: load documents with `toolmark ingest DIR` (Markdown and text files) so that search_documents finds something")
	}
	a.Runner = runner.New(runner.Config{
		Store: a.DB, Run: ag.run, After: ag.after, Logger: cfg.Logger, Metrics: a.Metrics,
		MaxTurns: cfg.MaxTurns, LeaseTTL: cfg.LeaseTTL, Retention: cfg.Retention, ModelName: ag.name,
	})
	a.Metrics.HubWrites(func() (int64, int64) {
		st := a.Runner.Hub().DirectStats()
		return st.Writes, st.HandedBack
	})
	a.API = api.New(api.Config{
		Store: a.DB, Runner: a.Runner, Render: markdown.Render, Logger: cfg.Logger, Metrics: a.Metrics,
		Web: web.Handler(), Auth: cfg.Auth, LocalUserID: localUser, Tools: ag.catalog, Models: ag.infos,
		Info:           api.Info{Model: ag.name, Demo: ag.demo, Version: Version},
		MaxUploadBytes: cfg.Uploads.File, MaxUploadsPerTurn: cfg.Uploads.Files, MaxUserUploadBytes: cfg.Uploads.User,
		MaxMessageBytes: cfg.MaxMessage, Heartbeat: cfg.Heartbeat, StreamWriteTimeout: cfg.StreamWriteTimeout, StreamWrites: cfg.StreamWrites,
		PDFText: cfg.PDFText,
	})
	return a, nil
}

func (a *App) openDB(ctx context.Context) error {
	if a.cfg.DB != nil {
		a.DB = a.cfg.DB
		return nil
	}
	d, err := OpenDatabase(ctx, a.cfg)
	if err != nil {
		return err
	}
	a.DB, a.pg, a.ownDB = d.DB, d.pg, true
	return nil
}

// Database is an open, migrated store and, when no URL was given, the
// embedded server behind it.
type Database struct {
	DB *store.DB
	pg *embeddedpg.Server
}

// OpenDatabase connects to cfg.DatabaseURL, or starts the embedded server
// in cfg.DataDir, and applies the migrations.
func OpenDatabase(ctx context.Context, cfg Config) (*Database, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	d := &Database{}
	url := cfg.DatabaseURL
	if url == "" {
		log.Info("starting the embedded PostgreSQL", "data_dir", cfg.DataDir)
		pg, err := embeddedpg.Start(ctx, embeddedpg.Config{DataDir: cfg.DataDir, Logger: log})
		if err != nil {
			return nil, err
		}
		d.pg, url = pg, pg.URL()
	}
	db, err := store.Open(ctx, url, store.WithLogger(log), store.WithWarmPool(), store.WithDirectURL(cfg.DatabaseDirectURL))
	if err != nil {
		d.Close()
		return nil, err
	}
	d.DB = db
	logPooler(log, db, cfg.LeaseTTL)
	if err := db.Migrate(ctx); err != nil {
		d.Close()
		return nil, fmt.Errorf("applying migrations: %w", err)
	}
	db.WarmIdle(ctx)
	return d, nil
}

// logPooler says in one line at start how the database is reached when
// DATABASE_URL goes through a pooler in transaction mode: with the direct
// URL for what needs a session, or without one, and then what that costs
// and what to set.
func logPooler(log *slog.Logger, db *store.DB, leaseTTL time.Duration) {
	if leaseTTL <= 0 {
		leaseTTL = runner.DefaultLeaseTTL
	}
	switch {
	case db.Pooled() && db.Sessions():
		log.Info("database: DATABASE_URL goes through a pooler in transaction mode; LISTEN, liveness locks and migrations use DATABASE_DIRECT_URL")
	case db.Pooled():
		log.Warn(fmt.Sprintf("database: DATABASE_URL goes through a pooler in transaction mode and DATABASE_DIRECT_URL is not set: replicas show they are alive with lease rows and poll for each other's events and cancels instead of listening, and the turns of a replica that dies are taken over within the lease time (%s) instead of 2 s; set DATABASE_DIRECT_URL to a direct connection to the same database", leaseTTL))
	case db.DirectGiven():
		log.Info("database: DATABASE_URL is a direct connection; DATABASE_DIRECT_URL is used for LISTEN, liveness locks and migrations all the same")
	}
}

// Close closes the store and stops the embedded server, if any.
func (d *Database) Close() {
	if d.DB != nil {
		d.DB.Close()
	}
	stopEmbedded(d.pg)
}

func stopEmbedded(pg *embeddedpg.Server) {
	if pg == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pg.Stop(ctx); err != nil {
		slog.Error("stopping the embedded PostgreSQL", "err", err)
	}
}

// Start finalises turns that a stopped server left behind and starts the
// runner's background work.
func (a *App) Start(ctx context.Context) error { return a.Runner.Start(ctx) }

// closeWait is how long open requests get to end once the streams are
// closed at shutdown.
const closeWait = 300 * time.Millisecond

// Serve serves HTTP on ln until ctx is done, then shuts down gracefully:
// no new turns, running turns get up to grace to finish, then the rest are
// cancelled and finalised, streams end, and the listener closes.
func (a *App) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	srv := &http.Server{
		Handler:           a.API,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second, // streams clear their own deadline
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Drain: not ready at once (a load balancer sends no one here), no new
	// turns or streams, queued turns handed to the other replicas, running
	// turns finish within grace; the listener and cancel requests keep
	// working for the streams still open until the end.
	a.log.Info("shutting down: draining; running turns may finish", "grace", grace)
	a.API.Drain()
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	a.Runner.Drain(sctx)
	_ = a.Runner.Shutdown(sctx)
	a.log.Info("shutting down: no turn runs here any more; closing the streams")
	a.API.CloseStreams()
	defer func() {
		a.Runner.Close()
		a.log.Info("shut down")
	}()
	// The streams end at once (with a hint to reconnect elsewhere); a
	// request still running after closeWait is cut, so the process exits
	// within its grace and about a second.
	hctx, hcancel := context.WithTimeout(context.Background(), closeWait)
	defer hcancel()
	a.API.StreamsClosed(hctx) // the streams net/http no longer tracks
	if err := srv.Shutdown(hctx); err != nil {
		a.log.Warn("shutting down: requests still open; closing their connections", "err", err)
		_ = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Close closes the database and stops the embedded server.
func (a *App) Close() {
	if a.mcp != nil {
		_ = a.mcp.Close()
	}
	if a.DB != nil && a.ownDB {
		a.DB.Close()
	}
	stopEmbedded(a.pg)
}

// ErrNotLoopback is returned by CheckListenAddr.
var ErrNotLoopback = toolmark.Errorf(toolmark.EINVALID, "local auth mode listens only on loopback addresses (127.0.0.1, ::1, localhost); use --auth token to listen elsewhere")

// CheckListenAddr refuses a non-loopback address in local auth mode.
func CheckListenAddr(auth, addr string) error {
	if auth != api.AuthLocal {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return toolmark.Errorf(toolmark.EINVALID, "listen address %q: %v", addr, err)
	}
	if host == "" || !api.IsLoopbackHost(host) {
		return ErrNotLoopback
	}
	return nil
}

// UploadLimits bound what users upload: bytes a file, files a turn, bytes
// a user keeps in all.
type UploadLimits struct {
	File  int64
	Files int
	User  int64
}
