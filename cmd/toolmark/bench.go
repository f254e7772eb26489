package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/toolmark/toolmark/internal/bench"
)

const benchUsage = `toolmark bench — the load tool.

Without --server it starts its own toolmark server (this binary's serve, on
a free loopback port, with the demo model shaped by the --demo-* flags) on
--database-url, or on an embedded PostgreSQL it starts in a temporary
directory, and reports server CPU, peak RSS and PostgreSQL transactions and
WAL per turn besides what the clients see. With --server it measures that
server from outside (PostgreSQL figures too when --database-url is given).

  toolmark bench                                   100 turns at once, 1 follower each
  toolmark bench --turns 200 --followers 4         200 turns × 4 followers
  toolmark bench --sweep 10,100,1000,2000 --table t.md --plot latency.png
  toolmark bench --idle --streams 10000            memory per idle follower
  toolmark bench --server http://127.0.0.1:8080 --turns 40 --concurrency 4

Flags:
`

// runBench parses the bench's flags and runs it; the work is done by
// package bench.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("toolmark bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, benchUsage); fs.PrintDefaults() }
	server := fs.String("server", os.Getenv("TOOLMARK_SERVER"), "URL of a running server to measure (env TOOLMARK_SERVER); empty: start one")
	token := fs.String("token", os.Getenv("TOOLMARK_TOKEN"), "API token for --auth token servers")
	dbURL := fs.String("database-url", os.Getenv("DATABASE_URL"), "PostgreSQL of the started server and of the PostgreSQL figures (env DATABASE_URL); empty: an embedded one")
	turns := fs.Int("turns", 100, "turns to run in all")
	conc := fs.Int("concurrency", 0, "turns in flight at once (0: all at once)")
	followers := fs.Int("followers", 1, "event streams per turn")
	question := fs.String("question", bench.DefaultQuestion, "the message of every turn")
	var demo bench.Demo
	fs.DurationVar(&demo.Delay, "demo-delay", 20*time.Millisecond, "started server: pause between the demo model's streamed chunks (0: none)")
	fs.IntVar(&demo.Tools, "demo-tools", 0, "started server: tool calls per turn (0: planned from the question, -1: none)")
	fs.IntVar(&demo.AnswerBytes, "demo-answer-bytes", 0, "started server: length of the demo's answer text in bytes (0: as written)")
	maxTurns := fs.Int("max-turns", 100_000, "started server: --max-turns")
	settle := fs.Duration("stats-settle", bench.DefaultStatsSettle, "idle time before PostgreSQL's transaction counts are read (0: none, counts approximate)")
	sweep := fs.String("sweep", "", "comma-separated concurrencies: one run per step, all its turns at once (e.g. 10,100,1000,2000)")
	table := fs.String("table", "", "with --sweep: also write the Markdown table to this file")
	plot := fs.String("plot", "", "with --sweep: write a PNG plot of latency against concurrent turns to this file")
	idle := fs.Bool("idle", false, "measure the started server's memory per idle follower instead of running a load")
	streams := fs.Int("streams", 10_000, "with --idle: idle streams to open")
	idleTurns := fs.Int("idle-turns", 10, "with --idle: turns the idle streams follow (they stay alive while measured)")
	asJSON := fs.Bool("json", false, "write the figures as JSON on stdout")
	serverLog := fs.String("server-log", "", "append the started servers' logs to this file")
	timeout := fs.Duration("timeout", 30*time.Minute, "stop after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *server != "" {
		for _, name := range []string{"demo-delay", "demo-tools", "demo-answer-bytes", "max-turns", "idle"} {
			if set[name] {
				return fmt.Errorf("--%s applies to a server the bench starts, not to --server", name)
			}
		}
	}
	if (*table != "" || *plot != "") && *sweep == "" {
		return errors.New("--table and --plot go with --sweep")
	}
	if *idle && *sweep != "" {
		return errors.New("--idle and --sweep are separate runs")
	}
	steps, err := parseSteps(*sweep)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	cfg := bench.Config{
		Server: strings.TrimRight(*server, "/"), Token: *token, DatabaseURL: *dbURL, Demo: demo,
		MaxTurns: *maxTurns, Question: *question, StatsSettle: *settle,
		Progress: stderr, ProgressTTY: isTerminal(stderr),
	}
	if cfg.Server == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("finding the toolmark binary to start a server: %w", err)
		}
		cfg.Command = []string{exe, "serve"}
	}
	if *serverLog != "" {
		f, err := os.OpenFile(*serverLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		cfg.ServerLog = f
	}
	b, err := bench.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer b.Close()

	var (
		out      any
		text     func(io.Writer) error
		problems []string
	)
	switch {
	case *idle:
		rep, err := b.Idle(ctx, bench.IdleLoad{Streams: *streams, Turns: *idleTurns})
		if err != nil {
			return err
		}
		out, text, problems = rep, rep.WriteText, rep.Problems()
	case len(steps) > 0:
		rep, err := b.Sweep(ctx, steps, *followers)
		if rep == nil {
			return err
		}
		if *table != "" {
			if werr := os.WriteFile(*table, []byte(rep.Table()), 0o644); werr != nil {
				return werr
			}
		}
		if *plot != "" {
			if perr := rep.Plot(*plot); perr != nil {
				return perr
			}
		}
		if err != nil {
			fmt.Fprint(stdout, rep.Table())
			return err
		}
		out, text, problems = rep, rep.WriteText, rep.Problems()
	default:
		rep, err := b.Run(ctx, bench.Load{Turns: *turns, Concurrency: *conc, Followers: *followers})
		if rep == nil {
			return err
		}
		if err != nil {
			rep.WriteText(stdout)
			return err
		}
		out, text, problems = rep, rep.WriteText, rep.Problems()
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else if err := text(stdout); err != nil {
		return err
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// parseSteps reads --sweep's list of concurrencies.
func parseSteps(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var steps []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--sweep: %q is not a number of turns", f)
		}
		steps = append(steps, n)
	}
	return steps, nil
}
