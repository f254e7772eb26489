package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/toolmark/toolmark/api"
	"github.com/toolmark/toolmark/internal/app"
	"github.com/toolmark/toolmark/runner"
	"github.com/toolmark/toolmark/simplifiedagent"
	"github.com/toolmark/toolmark/simplifiedagent/demo"
	"github.com/toolmark/toolmark/simplifiedagent/mcptools"
)

// dbFlags are the flags of every command that opens the database.
type dbFlags struct {
	url, directURL, dataDir, logLevel string
	logJSON                           bool
}

func (f *dbFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "database-url", os.Getenv("DATABASE_URL"), "PostgreSQL URL (env DATABASE_URL); empty starts an embedded server")
	fs.StringVar(&f.directURL, "database-direct-url", os.Getenv("DATABASE_DIRECT_URL"), "a direct (session) connection to the database when --database-url goes through a pooler in transaction mode (env DATABASE_DIRECT_URL): LISTEN, liveness locks and migrations use it")
	fs.StringVar(&f.dataDir, "data-dir", envOr("TOOLMARK_DATA_DIR", defaultDataDir()), "data directory of the embedded PostgreSQL")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.BoolVar(&f.logJSON, "log-json", false, "log as JSON lines")
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("toolmark serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "toolmark serve — run the server.\n\nFlags:\n")
		fs.PrintDefaults()
		fmt.Fprint(stderr, modelEnvHelp)
	}
	var db dbFlags
	db.register(fs)
	addr := fs.String("addr", envOr("TOOLMARK_ADDR", "127.0.0.1:8080"), "listen address")
	auth := fs.String("auth", "local", "auth mode: local (one user, loopback only) or token")
	maxTurns := fs.Int("max-turns", runner.DefaultMaxTurns, "turns that run at once; more wait in a queue")
	leaseTTL := fs.Duration("lease-ttl", 15*time.Second, "turn lease; a crashed server's turns are finalised after it expires")
	retention := fs.Duration("event-retention", 7*24*time.Hour, "prune the event log of turns finished longer ago (0 keeps it)")
	grace := fs.Duration("shutdown-grace", 20*time.Second, "how long running turns may finish at shutdown before they are cancelled")
	maxMessage := fs.Int("max-message-bytes", 64<<10, "longest user message")
	uploads := uploadFlags(fs)
	streamWrites := fs.String("stream-writes", envOr("TOOLMARK_STREAM_WRITES", api.StreamWritesHub), "who writes the events of an event stream that caught up (env TOOLMARK_STREAM_WRITES): hub (one writer after each commit, for every such stream over HTTP/1.1) or follower (each stream's own goroutine)")
	provider := fs.String("model-provider", os.Getenv("TOOLMARK_MODEL_PROVIDER"), "demo, openai, azure, anthropic or mistral (env TOOLMARK_MODEL_PROVIDER; default: openai if OPENAI_BASE_URL or OPENAI_API_KEY is set, azure if AZURE_OPENAI_ENDPOINT is, anthropic if ANTHROPIC_API_KEY is, mistral if MISTRAL_API_KEY is, else demo)")
	var retry simplifiedagent.RetryPolicy
	fs.IntVar(&retry.MaxAttempts, "model-attempts", 5, "attempts of a model call that fails before it streams anything (429, 529, 5xx, refused, reset, timeout); 1 never retries")
	fs.DurationVar(&retry.MaxTotal, "model-retry-for", time.Minute, "how long a model call may be retried, waits included")
	demoDelay := fs.Duration("demo-delay", 25*time.Millisecond, "pause between the demo model's streamed chunks (0: none)")
	debugAddr := fs.String("debug-addr", os.Getenv("TOOLMARK_DEBUG_ADDR"), "loopback address for Go's profiler (/debug/pprof/); empty: off")
	var demoCfg demo.Config
	fs.IntVar(&demoCfg.Tools, "demo-tools", 0, "tool calls of the demo model's first round (0: planned from the question, -1: none)")
	fs.IntVar(&demoCfg.AnswerBytes, "demo-answer-bytes", 0, "pad or cut the demo model's answers to this many bytes (0: as written)")
	fs.StringVar(&demoCfg.AnswerShape, "demo-answer-shape", "", "what --demo-answer-bytes pads with: paragraph (default), code or mixed")
	gcPercent := fs.Int("gc-percent", defaultGCPercent, "the Go garbage collector's target: heap growth, in percent of the live heap, that starts a collection (Go's GOGC, which wins when set and this flag is not)")
	fetchAllow := fs.String("fetch-allow", "", "comma-separated CIDR prefixes fetch_url may reach although private (e.g. 10.0.0.0/8)")
	modelsFile := fs.String("models", "", "a JSON file listing the models the server offers: [{id, label, provider, name, baseUrl, apiKeyEnv, images, documents, default}] (env TOOLMARK_MODELS holds the JSON itself); without it the model variables below configure one model")
	mcpFile := fs.String("mcp-config", os.Getenv("TOOLMARK_MCP_CONFIG"), "an mcpServers JSON file (as Claude Desktop and Cursor use) whose MCP servers' tools the agent gets (env TOOLMARK_MCP_CONFIG)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var mcpCfg *mcptools.Config
	if *mcpFile != "" {
		c, err := mcptools.Load(*mcpFile, os.Getenv)
		if err != nil {
			return &exitError{code: 2, err: err}
		}
		mcpCfg = c
	}
	if err := app.CheckListenAddr(*auth, *addr); err != nil {
		return err
	}
	if err := setGCPercent(fs, *gcPercent); err != nil {
		return err
	}
	if err := demo.CheckShape(demoCfg.AnswerShape); err != nil {
		return fmt.Errorf("--demo-answer-shape: %w", err)
	}
	var allow []netip.Prefix
	for _, p := range strings.Split(*fetchAllow, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		pfx, err := netip.ParsePrefix(p)
		if err != nil {
			return fmt.Errorf("--fetch-allow: %w", err)
		}
		allow = append(allow, pfx)
	}
	if *streamWrites != api.StreamWritesHub && *streamWrites != api.StreamWritesFollower {
		return fmt.Errorf("--stream-writes must be %s or %s", api.StreamWritesHub, api.StreamWritesFollower)
	}
	models, err := modelsConfig(*modelsFile)
	if err != nil {
		return err
	}
	// Listen first: a port in use fails at once, before the database starts.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", *addr, err)
	}
	defer ln.Close()
	log := newLogger(stderr, db.logLevel, db.logJSON)
	if *debugAddr != "" {
		if err := serveDebug(*debugAddr, log); err != nil {
			return err
		}
	}
	a, err := app.Open(ctx, app.Config{
		DatabaseURL: db.url, DatabaseDirectURL: db.directURL, DataDir: db.dataDir, Auth: *auth, Model: modelConfig(*provider, *demoDelay, demoCfg, retry),
		Models:     models,
		SearxNGURL: os.Getenv("TOOLMARK_SEARXNG_URL"), FetchAllow: allow, MCP: mcpCfg,
		MaxTurns: *maxTurns, LeaseTTL: *leaseTTL, Retention: *retention, MaxMessage: *maxMessage, Uploads: *uploads, StreamWrites: *streamWrites, Logger: log,
		PDFText: pdfTextCommand(),
	})
	if err != nil {
		return err
	}
	defer a.Close()
	if err := a.Start(ctx); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "toolmark is serving at http://%s/ (model: %s, auth: %s) — press Ctrl-C to stop\n", ln.Addr(), modelName(*provider, len(models)), *auth)
	return a.Serve(ctx, ln, *grace)
}

// defaultGCPercent is the server's garbage collector target unless told
// otherwise. What the server allocates mostly lives for one commit, and
// what it keeps (the tails of the turns in flight) is small beside it, so
// at Go's 100 % it collected about once a second under load, each mark phase
// taking a quarter of the processors from the commits and the streams. At
// 200 % it collects half as often, for a heap up to three times the live
// one instead of twice (docs/performance.md has the figures, and those of
// 400 %). GOMEMLIMIT still caps it where memory is tight.
const defaultGCPercent = 200

// setGCPercent applies --gc-percent, unless GOGC is set and the flag is
// not.
func setGCPercent(fs *flag.FlagSet, percent int) error {
	if percent <= 0 {
		return fmt.Errorf("--gc-percent must be a positive percent, not %d", percent)
	}
	if runtimeFlagApplies(fs, "gc-percent", "GOGC") {
		debug.SetGCPercent(percent)
	}
	return nil
}

// modelsConfig reads the models list of --models FILE, else of
// TOOLMARK_MODELS; none is nil (one model, from the model variables).
func modelsConfig(file string) ([]app.ModelConfig, error) {
	data := []byte(os.Getenv("TOOLMARK_MODELS"))
	if file != "" {
		var err error
		if data, err = os.ReadFile(file); err != nil {
			return nil, fmt.Errorf("--models: %w", err)
		}
	}
	if len(data) == 0 {
		return nil, nil
	}
	models, err := app.ParseModels(data, os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("--models: %w", err)
	}
	return models, nil
}

// modelConfig picks the model from the flag and the environment.
func modelConfig(provider string, demoDelay time.Duration, demoCfg demo.Config, retry simplifiedagent.RetryPolicy) app.ModelConfig {
	m := app.ModelConfig{Provider: provider, Name: os.Getenv("TOOLMARK_MODEL"), DemoDelay: demoDelay, Demo: demoCfg, Retry: retry}
	if demoDelay == 0 {
		m.DemoDelay = -1 // no pause at all
	}
	if m.Provider == "" {
		switch {
		case os.Getenv("OPENAI_BASE_URL") != "" || os.Getenv("OPENAI_API_KEY") != "":
			m.Provider = "openai"
		case os.Getenv("AZURE_OPENAI_ENDPOINT") != "":
			m.Provider = "azure"
		case os.Getenv("ANTHROPIC_API_KEY") != "":
			m.Provider = "anthropic"
		case os.Getenv("MISTRAL_API_KEY") != "":
			m.Provider = "mistral"
		default:
			m.Provider = "demo"
		}
	}
	switch m.Provider {
	case "openai":
		m.BaseURL, m.APIKey = os.Getenv("OPENAI_BASE_URL"), os.Getenv("OPENAI_API_KEY")
		if m.Name == "" {
			m.Name = "gpt-4o-mini"
		}
	case "azure":
		m.BaseURL, m.APIKey, m.APIVersion = os.Getenv("AZURE_OPENAI_ENDPOINT"), os.Getenv("AZURE_OPENAI_API_KEY"), os.Getenv("AZURE_OPENAI_API_VERSION")
		if m.Name == "" {
			m.Name = os.Getenv("AZURE_OPENAI_DEPLOYMENT")
		}
	case "anthropic":
		m.BaseURL, m.APIKey = os.Getenv("ANTHROPIC_BASE_URL"), os.Getenv("ANTHROPIC_API_KEY")
		if m.Name == "" {
			m.Name = "claude-sonnet-4-5"
		}
	case "mistral":
		m.BaseURL, m.APIKey = os.Getenv("MISTRAL_BASE_URL"), os.Getenv("MISTRAL_API_KEY")
		if m.Name == "" {
			m.Name = "magistral-medium-latest"
		}
	}
	return m
}

func modelName(provider string, listed int) string {
	if listed > 0 {
		return fmt.Sprintf("%d models", listed)
	}
	m := modelConfig(provider, 0, demo.Config{}, simplifiedagent.RetryPolicy{})
	if m.Provider == "demo" {
		return "offline demo model"
	}
	return m.Provider + "/" + m.Name
}

// serveDebug serves Go's profiler on a loopback address, for
// `go tool pprof http://ADDR/debug/pprof/profile`.
func serveDebug(addr string, log *slog.Logger) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !api.IsLoopbackHost(host) {
		return fmt.Errorf("--debug-addr %q: the profiler listens only on a loopback address", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--debug-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	log.Info("profiler listening", "addr", ln.Addr().String())
	go func() { _ = http.Serve(ln, mux) }()
	return nil
}

// uploadFlags defines the flags that bound uploads.
func uploadFlags(fs *flag.FlagSet) *app.UploadLimits {
	var u app.UploadLimits
	fs.Int64Var(&u.File, "max-upload-bytes", 20<<20, "largest file a user can upload")
	fs.IntVar(&u.Files, "max-uploads-per-turn", 10, "most files a turn (and an upload request) takes")
	fs.Int64Var(&u.User, "max-user-upload-bytes", 500<<20, "most bytes of uploads a user keeps in all")
	return &u
}

// pdfTextCommand is how serve reads PDFs' text: this executable's
// "pdftext" command in a child process, so that a hostile PDF cannot hang
// or exhaust the server; in the server itself when the executable cannot
// be found.
func pdfTextCommand() []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return []string{exe, "pdftext"}
}
