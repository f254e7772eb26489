// Command faults runs toolmark's fault-injection suite (package
// internal/faults) against `toolmark serve` processes and prints a progress
// line per step, then a table of the criteria and figures. It exits with
// status 1 when a criterion fails and 2 when the suite cannot run.
//
//	go run ./internal/faults/cmd --preset short       # what CI runs
//	go run ./internal/faults/cmd --preset full        # make faults
//	go run ./internal/faults/cmd --only kill --kill-rounds 10
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/toolmark/toolmark/internal/faults"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("faults", flag.ContinueOnError)
	fs.SetOutput(stderr)
	preset := fs.String("preset", "short", "counts to start from: short (CI) or full (docs/reliability.md)")
	bin := fs.String("bin", "", "the toolmark binary; empty builds ./cmd/toolmark into the work directory")
	dbURL := fs.String("database-url", os.Getenv("DATABASE_URL"), "a PostgreSQL server to create the run's database on (env DATABASE_URL); empty starts an embedded one (needed for the PostgreSQL restarts)")
	workDir := fs.String("work-dir", "", "where replica logs and the embedded server's data go; empty makes a temporary directory, removed unless --keep")
	keep := fs.Bool("keep", false, "keep the work directory (replica logs) after the run")
	only := fs.String("only", "", "comma-separated scenarios to run: "+strings.Join(faults.Scenarios, ", "))
	seed := fs.Uint64("seed", 0, "seed of the random choices (0: random; the report prints it)")
	writeDoc := fs.String("write-doc", "", "write the figures into this file (docs/reliability.md) between faults:SECTION markers")
	section := fs.String("doc-section", "latest", "the section of --write-doc to replace")
	label := fs.String("doc-label", "", "the heading of the section written by --write-doc")

	var c faults.Config
	fs.IntVar(&c.KillRounds, "kill-rounds", -1, "kill -9 rounds")
	fs.IntVar(&c.KillBurst, "kill-burst", -1, "turn requests per burst")
	fs.DurationVar(&c.KillSettle, "kill-settle", -1, "how long turns left behind by kills may take to end before the final checks")
	fs.IntVar(&c.TakeoverRounds, "takeover-rounds", -1, "kill -9 rounds with a second replica")
	fs.IntVar(&c.TakeoverTurns, "takeover-turns", -1, "turns on the killed replica per takeover round")
	fs.DurationVar(&c.TakeoverTimeout, "takeover-timeout", -1, "a turn not taken over by then counts as this long")
	fs.IntVar(&c.PGRounds, "pg-rounds", -1, "PostgreSQL restarts")
	fs.DurationVar(&c.PGDown, "pg-down", -1, "how long PostgreSQL stays down")
	fs.DurationVar(&c.PGSettle, "pg-settle", -1, "how long turns may take to end once PostgreSQL is back")
	fs.IntVar(&c.ResumeCycles, "resume-cycles", -1, "disconnect/resume cycles at least")
	fs.IntVar(&c.Hostile, "hostile", -1, "hostile requests at least")
	fs.IntVar(&c.DrainRounds, "drain-rounds", -1, "SIGTERM drains")
	fs.DurationVar(&c.DrainGrace, "drain-grace", -1, "--shutdown-grace of the drained replica")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}

	var cfg faults.Config
	switch *preset {
	case "short":
		cfg = faults.Short()
	case "full":
		cfg = faults.Full()
	default:
		fmt.Fprintf(stderr, "faults: unknown preset %q (short or full)\n", *preset)
		return 2
	}
	override(&cfg.KillRounds, c.KillRounds)
	override(&cfg.KillBurst, c.KillBurst)
	override(&cfg.KillSettle, c.KillSettle)
	override(&cfg.TakeoverRounds, c.TakeoverRounds)
	override(&cfg.TakeoverTurns, c.TakeoverTurns)
	override(&cfg.TakeoverTimeout, c.TakeoverTimeout)
	override(&cfg.PGRounds, c.PGRounds)
	override(&cfg.PGDown, c.PGDown)
	override(&cfg.PGSettle, c.PGSettle)
	override(&cfg.ResumeCycles, c.ResumeCycles)
	override(&cfg.Hostile, c.Hostile)
	override(&cfg.DrainRounds, c.DrainRounds)
	override(&cfg.DrainGrace, c.DrainGrace)
	cfg.DatabaseURL, cfg.Seed, cfg.Progress = *dbURL, *seed, stderr
	if *only != "" {
		for _, s := range strings.Split(*only, ",") {
			cfg.Only = append(cfg.Only, strings.TrimSpace(s))
		}
	}

	cfg.WorkDir = *workDir
	if cfg.WorkDir == "" {
		dir, err := os.MkdirTemp("", "toolmark-faults-")
		if err != nil {
			fmt.Fprintln(stderr, "faults:", err)
			return 2
		}
		cfg.WorkDir = dir
		if !*keep {
			defer os.RemoveAll(dir)
		}
	}
	cfg.Bin = *bin
	if cfg.Bin == "" {
		cfg.Bin = filepath.Join(cfg.WorkDir, "toolmark")
		fmt.Fprintln(stderr, "faults: building ./cmd/toolmark")
		build := exec.CommandContext(ctx, "go", "build", "-o", cfg.Bin, "./cmd/toolmark")
		build.Stdout, build.Stderr = stderr, stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(stderr, "faults: building toolmark:", err)
			return 2
		}
	}
	if abs, err := filepath.Abs(cfg.Bin); err == nil {
		cfg.Bin = abs
	}

	rep, err := faults.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "faults:", err)
		if rep == nil {
			return 2
		}
	}
	fmt.Fprintln(stdout)
	rep.WriteTable(stdout)
	if *keep || *workDir != "" {
		fmt.Fprintf(stdout, "replica logs: %s\n", cfg.WorkDir)
	}
	if *writeDoc != "" && err == nil { // an interrupted run has no figures to publish
		if *label == "" {
			*label = "Run of " + time.Now().UTC().Format("2006-01-02")
		}
		cmd := docCommand(fs, rep.Seed)
		if err := faults.WriteDoc(*writeDoc, *section, rep.Markdown(*label, cmd)); err != nil {
			fmt.Fprintln(stderr, "faults: writing the figures:", err)
			return 2
		}
		fmt.Fprintf(stdout, "figures written to %s (section %s)\n", *writeDoc, *section)
	}
	if err != nil {
		return 2
	}
	if rep.Failed() {
		return 1
	}
	return 0
}

// docCommand is the command that repeats a run: the flags that set what it
// does, and its seed; not those about files and output.
func docCommand(fs *flag.FlagSet, seed uint64) string {
	parts := []string{"go run ./internal/faults/cmd"}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "bin", "work-dir", "keep", "write-doc", "doc-section", "doc-label", "seed", "database-url":
			return
		}
		v := f.Value.String()
		if strings.ContainsAny(v, " '\"") {
			v = "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
		}
		parts = append(parts, "--"+f.Name+" "+v)
	})
	return strings.Join(append(parts, fmt.Sprintf("--seed %d", seed)), " ")
}

// override sets *dst to v unless v is negative (the flag was not given).
func override[T int | time.Duration](dst *T, v T) {
	if v >= 0 {
		*dst = v
	}
}
