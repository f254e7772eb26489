// Command toolmark-faults runs toolmark's fault-injection suite (package
// internal/harness/faults) against `toolmark serve` processes and prints a progress
// line per step, then a table of the criteria and figures. It exits with
// status 1 when a criterion fails and 2 when the suite cannot run.
//
//	go run ./cmd/toolmark-faults --preset short       # what CI runs
//	go run ./cmd/toolmark-faults --preset full        # make faults
//	go run ./cmd/toolmark-faults --only kill --kill-rounds 10
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

	"github.com/toolmark/toolmark/internal/harness/faults"
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

	var given faults.Config // the counts given as flags; the others come from the preset
	bindCounts(fs, &given)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}

	cfg, err := presetConfig(fs, *preset)
	if err != nil {
		fmt.Fprintln(stderr, "faults:", err)
		return 2
	}
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
	parts := []string{"go run ./cmd/toolmark-faults"}
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

// presetConfig returns the counts of a preset, with those given as flags
// of fs (defined by bindCounts) in place of its own.
func presetConfig(fs *flag.FlagSet, preset string) (faults.Config, error) {
	var cfg faults.Config
	switch preset {
	case "short":
		cfg = faults.Short()
	case "full":
		cfg = faults.Full()
	default:
		return cfg, fmt.Errorf("unknown preset %q (short or full)", preset)
	}
	onCfg := flag.NewFlagSet("counts", flag.ContinueOnError)
	bindCounts(onCfg, &cfg)
	var err error
	fs.Visit(func(f *flag.Flag) {
		if onCfg.Lookup(f.Name) != nil && err == nil {
			err = onCfg.Set(f.Name, f.Value.String())
		}
	})
	return cfg, err
}

// bindCounts defines on fs the flags of each scenario's counts and times,
// bound to c's fields, whose values are the defaults.
func bindCounts(fs *flag.FlagSet, c *faults.Config) {
	const preset = " (default: the preset's)"
	fs.IntVar(&c.KillRounds, "kill-rounds", c.KillRounds, "kill -9 rounds"+preset)
	fs.IntVar(&c.KillBurst, "kill-burst", c.KillBurst, "turn requests per burst"+preset)
	fs.DurationVar(&c.KillSettle, "kill-settle", c.KillSettle, "how long turns left behind by kills may take to end before the final checks"+preset)
	fs.IntVar(&c.TakeoverRounds, "takeover-rounds", c.TakeoverRounds, "kill -9 rounds with a second replica"+preset)
	fs.IntVar(&c.TakeoverTurns, "takeover-turns", c.TakeoverTurns, "turns on the killed replica per takeover round"+preset)
	fs.DurationVar(&c.TakeoverTimeout, "takeover-timeout", c.TakeoverTimeout, "a turn not taken over by then counts as this long"+preset)
	fs.IntVar(&c.PGRounds, "pg-rounds", c.PGRounds, "PostgreSQL restarts"+preset)
	fs.DurationVar(&c.PGDown, "pg-down", c.PGDown, "how long PostgreSQL stays down"+preset)
	fs.DurationVar(&c.PGSettle, "pg-settle", c.PGSettle, "how long turns may take to end once PostgreSQL is back"+preset)
	fs.IntVar(&c.ResumeCycles, "resume-cycles", c.ResumeCycles, "disconnect/resume cycles at least"+preset)
	fs.IntVar(&c.Hostile, "hostile", c.Hostile, "hostile requests at least"+preset)
	fs.IntVar(&c.DrainRounds, "drain-rounds", c.DrainRounds, "SIGTERM drains"+preset)
	fs.DurationVar(&c.DrainGrace, "drain-grace", c.DrainGrace, "--shutdown-grace of the drained replica"+preset)
}
