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
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
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
  DATABASE_URL       PostgreSQL to use; unset starts an embedded server
  OPENAI_BASE_URL, OPENAI_API_KEY, TOOLMARK_MODEL   an OpenAI-compatible model
  ANTHROPIC_API_KEY  an Anthropic model (TOOLMARK_MODEL names it)
  TOOLMARK_SEARXNG_URL   a SearxNG server for the web_search tool
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

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
