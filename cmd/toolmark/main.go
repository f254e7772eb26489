// Command toolmark is the toolmark server and its tools.
//
//	toolmark serve     run the server (embedded PostgreSQL and the demo model by default)
//	toolmark chat      the terminal client
//	toolmark ingest    load markdown and text files into the knowledge base
//	toolmark token     create an API token for a user
//	toolmark migrate   apply the database migrations
//	toolmark bench     the load tool
//
// Flags and environment variables are read here and nowhere else.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"syscall"

	"github.com/toolmark/toolmark/internal/pdftext"
	"github.com/toolmark/toolmark/simplifiedagent"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := cpuProfile(os.Getenv("TOOLMARK_CPUPROFILE"))
	err := Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stopProfile()
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "toolmark:", err)
		var ec interface{ ExitCode() int }
		if errors.As(err, &ec) {
			os.Exit(ec.ExitCode())
		}
		os.Exit(1)
	}
}

const usage = `toolmark — a chat backend whose answers show live tool-call status.

Usage:
  toolmark serve   [flags]        run the server (see toolmark serve -h)
  toolmark chat    [flags]        chat in the terminal with a running server
  toolmark ingest  [flags] DIR    load .md and .txt files into the knowledge base
  toolmark token create --user NAME   print a new API token for NAME
  toolmark migrate [flags]        apply the database migrations
  toolmark bench   [flags]        the load tool: run turns against a server of its own or --server, report latency and costs

Environment:
  DATABASE_URL       PostgreSQL to use; unset starts an embedded server. It may go through a pooler in transaction mode (PgBouncer, Supavisor, Neon)
  DATABASE_DIRECT_URL    a direct connection to the same database, for LISTEN, liveness locks and migrations when DATABASE_URL is pooled
  TOOLMARK_SEARXNG_URL   a SearxNG server for the web_search tool
  TOOLMARK_MCP_CONFIG    an mcpServers JSON file: the agent gets its MCP servers' tools
  TOOLMARK_CPUPROFILE    write the command's CPU profile to this file (go tool pprof)
` + modelEnvHelp

// modelEnvHelp lists the variables that choose the model, for toolmark -h
// and toolmark serve -h.
const modelEnvHelp = `
The model (none set: the offline demo model):
  TOOLMARK_MODEL_PROVIDER   demo, openai, azure, anthropic or mistral (default: from the variables below)
  TOOLMARK_MODEL            the model's name (default gpt-4o-mini, claude-sonnet-4-5)
  OpenAI and compatible servers (Ollama, vLLM, llama.cpp):
    OPENAI_BASE_URL         e.g. http://localhost:11434/v1 (default https://api.openai.com/v1)
    OPENAI_API_KEY          sent as a bearer token (empty for servers without keys)
  Azure OpenAI:
    AZURE_OPENAI_ENDPOINT   e.g. https://my-resource.openai.azure.com
    AZURE_OPENAI_API_KEY    the resource's key
    AZURE_OPENAI_DEPLOYMENT the deployment (or TOOLMARK_MODEL)
    AZURE_OPENAI_API_VERSION  default ` + simplifiedagent.DefaultAzureAPIVersion + `
  Anthropic:
    ANTHROPIC_API_KEY       the API key
    ANTHROPIC_BASE_URL      another address for the messages API (a proxy, a gateway); default Anthropic's
  Mistral (requests without stream_options, which Mistral refuses):
    MISTRAL_API_KEY         the API key
    MISTRAL_BASE_URL        default https://api.mistral.ai/v1
`

// Main runs one subcommand.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return flag.ErrHelp
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], stdout, stderr)
	case "chat":
		return runChat(ctx, args[1:], stdin, stdout, stderr)
	case "ingest":
		return runIngest(ctx, args[1:], stdout, stderr)
	case "token":
		return runToken(ctx, args[1:], stdout, stderr)
	case "migrate":
		return runMigrate(ctx, args[1:], stdout, stderr)
	case "bench":
		return runBench(ctx, args[1:], stdout, stderr)
	case "pdftext": // the child that reads a PDF's text for serve (pdfTextCommand)
		return pdftext.Serve(args[1:], stdin, stdout)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

// newLogger returns the structured logger of a command.
func newLogger(w io.Writer, level string, json bool) *slog.Logger {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		lv = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: lv}
	if json {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// defaultDataDir is where the embedded PostgreSQL keeps its data:
// $XDG_DATA_HOME/toolmark/pgdata or ~/.local/share/toolmark/pgdata.
func defaultDataDir() string {
	base := os.Getenv("XDG_DATA_HOME")
	if base == "" {
		if home, err := os.UserHomeDir(); err == nil {
			base = filepath.Join(home, ".local", "share")
		} else {
			base = os.TempDir()
		}
	}
	return filepath.Join(base, "toolmark", "pgdata")
}

// given reports whether the command line set flag name of fs.
func given(fs *flag.FlagSet, name string) (ok bool) {
	fs.Visit(func(f *flag.Flag) { ok = ok || f.Name == name })
	return ok
}

// runtimeFlagApplies reports whether a flag that sets one of Go's runtime
// knobs takes effect: the command line gave it, or the knob's own
// environment variable (GOGC, GOMAXPROCS), which wins over the flag's
// default, is not set.
func runtimeFlagApplies(fs *flag.FlagSet, name, env string) bool {
	return given(fs, name) || os.Getenv(env) == ""
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// cpuProfile writes the CPU profile of the whole command to file, when
// set (TOOLMARK_CPUPROFILE: any command, the terminal client included, for
// go tool pprof); it returns the function that ends it.
func cpuProfile(file string) func() {
	if file == "" {
		return func() {}
	}
	f, err := os.Create(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "toolmark: TOOLMARK_CPUPROFILE:", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "toolmark: TOOLMARK_CPUPROFILE:", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
