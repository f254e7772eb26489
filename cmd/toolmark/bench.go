package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/toolmark/toolmark/internal/harness/bench"
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
  toolmark bench --arrivals poisson --rate 100 --turns 3000
                                                   open loop: turns arrive at random, 100/s
  toolmark bench --find-capacity --p99 50ms        the most turns in flight with delivery p99 ≤ 50 ms
  toolmark bench --history 300000 --arrivals poisson --rate 100 --turns 4000
                                                   Poisson arrivals on a database of 300 000 earlier turns
  toolmark bench --render --turns 20 --demo-answer-bytes 12000
                                                   followers read rendered HTML, as the page does
  toolmark bench --protocols page,ai-sdk           beside each turn's event stream, the page's and
                                                   an AI SDK frontend's streams of the same turn
  toolmark bench --idle --streams 10000            memory per idle follower
  toolmark bench --idle --render                   memory per idle page (rendering stream)
  toolmark bench --server http://127.0.0.1:8080 --turns 40 --concurrency 4

Flags:
`

// runBench parses the bench's flags and runs it; the work is done by
// package bench.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("toolmark bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, benchUsage); fs.PrintDefaults() }
	f := bindBenchFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if err := f.check(set); err != nil {
		return err
	}
	// The bench is the load client. With a processor per core its
	// goroutines wake on every core at once, and its threads wait in the
	// run queue beside the server's and PostgreSQL's, although it needs
	// about a third of a core: on one it takes no more than its share.
	if f.procs > 0 && runtimeFlagApplies(fs, "procs", "GOMAXPROCS") {
		runtime.GOMAXPROCS(f.procs)
	}
	steps, err := parseSteps(f.sweep)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	cfg, closeLog, err := f.config(stderr)
	if err != nil {
		return err
	}
	defer closeLog()
	b, err := bench.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer b.Close()

	rep, err := runBenchMode(ctx, b, f.mode(steps))
	if err != nil {
		if rep != nil { // the figures measured before the failure
			_ = rep.WriteText(stdout)
		}
		return err
	}
	return writeBenchReport(stdout, rep, f.asJSON)
}

// benchFlags are the values of toolmark bench's flags.
type benchFlags struct {
	server, token, dbURL        string
	turns, conc, followers      int
	arrivals, protocols         string
	rate                        float64
	warmup                      time.Duration
	render, capacity            bool
	p99, window                 time.Duration
	capStart, capMax, capRepeat int
	question                    string
	demo                        bench.Demo
	maxTurns, history           int
	settle                      time.Duration
	sweep, table, plot          string
	idle                        bool
	streams, idleTurns          int
	asJSON                      bool
	serverLog                   string
	timeout                     time.Duration
	procs                       int
	replicas                    int
	pooler                      string
}

// bindBenchFlags defines toolmark bench's flags on fs.
func bindBenchFlags(fs *flag.FlagSet) *benchFlags {
	f := &benchFlags{}
	fs.StringVar(&f.server, "server", os.Getenv("TOOLMARK_SERVER"), "URL of a running server to measure (env TOOLMARK_SERVER); several, comma-separated, are replicas: turn k goes to the k-th mod N, its followers to the others; empty: start one")
	fs.StringVar(&f.token, "token", os.Getenv("TOOLMARK_TOKEN"), "API token for --auth token servers")
	fs.StringVar(&f.dbURL, "database-url", os.Getenv("DATABASE_URL"), "PostgreSQL of the started server and of the PostgreSQL figures (env DATABASE_URL); empty: an embedded one")
	fs.IntVar(&f.turns, "turns", 100, "turns to run in all")
	fs.IntVar(&f.conc, "concurrency", 0, "turns in flight at once (0: all at once)")
	fs.IntVar(&f.followers, "followers", 1, "event streams per turn")
	fs.StringVar(&f.arrivals, "arrivals", bench.ArrivalsBurst, "how turns start: burst (--concurrency at a time) or poisson (at random, --rate per second, open loop)")
	fs.Float64Var(&f.rate, "rate", 0, "with --arrivals poisson: turns started per second on average")
	fs.DurationVar(&f.warmup, "warmup", 0, "with --arrivals poisson: leave the turns that start in this first stretch out of the latencies")
	fs.BoolVar(&f.render, "render", false, "followers read rendered HTML (?render=html) with gzip accepted, as the web page does; reports bytes on the wire")
	fs.StringVar(&f.protocols, "protocols", "", "comma-separated: one follower of each of these other protocols per turn besides the event streams: page (rendered HTML), ai-sdk (the AI SDK UI message stream); their latencies are not measured")
	fs.BoolVar(&f.capacity, "find-capacity", false, "search for the most turns in flight (Poisson arrivals) whose delivery p99 stays under --p99")
	fs.DurationVar(&f.p99, "p99", 50*time.Millisecond, "with --find-capacity: the live delivery p99 to stay under")
	fs.DurationVar(&f.window, "window", 20*time.Second, "with --find-capacity: how long turns arrive in each step")
	fs.IntVar(&f.capStart, "capacity-start", 50, "with --find-capacity: turns in flight of the first step (doubled while under the target)")
	fs.IntVar(&f.capMax, "capacity-max", 4000, "with --find-capacity: the most turns in flight to try")
	fs.IntVar(&f.capRepeat, "capacity-repeat", 3, "with --find-capacity: the most runs of a step whose p99 is near the target (the majority decides; 1: one run a step)")
	fs.IntVar(&f.procs, "procs", 1, "processors the bench's own Go code runs on at once (its GOMAXPROCS, which wins when set and this flag is not; 0: every core)")
	fs.StringVar(&f.question, "question", bench.DefaultQuestion, "the message of every turn")
	fs.DurationVar(&f.demo.Delay, "demo-delay", 20*time.Millisecond, "started server: pause between the demo model's streamed chunks (0: none)")
	fs.IntVar(&f.demo.Tools, "demo-tools", 0, "started server: tool calls per turn (0: planned from the question, -1: none)")
	fs.IntVar(&f.demo.AnswerBytes, "demo-answer-bytes", 0, "started server: length of the demo's answer text in bytes (0: as written)")
	fs.StringVar(&f.demo.AnswerShape, "demo-answer-shape", "", "started server: what --demo-answer-bytes pads with: paragraph (default), code or mixed")
	fs.IntVar(&f.maxTurns, "max-turns", 100_000, "started server: --max-turns")
	fs.IntVar(&f.replicas, "replicas", 1, "started servers: how many replicas on one PostgreSQL; turn k goes to replica k mod N and its followers stream from the others")
	fs.StringVar(&f.pooler, "pooler", "", "started servers: reach PostgreSQL through PgBouncer in transaction mode: pgbouncer (its URL only) or pgbouncer+direct (with DATABASE_DIRECT_URL); empty: directly")
	fs.IntVar(&f.history, "history", 0, "started server: finished turns written into the database before the first run, as an aged deployment holds (e.g. 300000)")
	fs.DurationVar(&f.settle, "stats-settle", bench.DefaultStatsSettle, "idle time before PostgreSQL's transaction counts are read (0: none, counts approximate)")
	fs.StringVar(&f.sweep, "sweep", "", "comma-separated concurrencies: one run per step, all its turns at once (e.g. 10,100,1000,2000)")
	fs.StringVar(&f.table, "table", "", "with --sweep: also write the Markdown table to this file")
	fs.StringVar(&f.plot, "plot", "", "with --sweep: write a PNG plot of latency against concurrent turns to this file")
	fs.BoolVar(&f.idle, "idle", false, "measure the started server's memory per idle follower instead of running a load")
	fs.IntVar(&f.streams, "streams", 10_000, "with --idle: idle streams to open")
	fs.IntVar(&f.idleTurns, "idle-turns", 10, "with --idle: turns the idle streams follow (they stay alive while measured)")
	fs.BoolVar(&f.asJSON, "json", false, "write the figures as JSON on stdout")
	fs.StringVar(&f.serverLog, "server-log", "", "append the started servers' logs to this file")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Minute, "stop after this long")
	return f
}

// check refuses flags that do not go together; set holds the names of the
// flags given.
func (f *benchFlags) check(set map[string]bool) error {
	if f.server != "" {
		for _, name := range []string{"demo-delay", "demo-tools", "demo-answer-bytes", "demo-answer-shape", "max-turns", "idle", "history", "replicas", "pooler"} {
			if set[name] {
				return fmt.Errorf("--%s applies to a server the bench starts, not to --server", name)
			}
		}
	}
	if f.procs < 0 {
		return fmt.Errorf("--procs must be 0 or more, not %d", f.procs)
	}
	if (f.table != "" || f.plot != "") && f.sweep == "" {
		return errors.New("--table and --plot go with --sweep")
	}
	if n := btoi(f.idle) + btoi(f.sweep != "") + btoi(f.capacity); n > 1 {
		return errors.New("--idle, --sweep and --find-capacity are separate runs")
	}
	if f.arrivals == bench.ArrivalsPoisson && f.rate <= 0 {
		return errors.New("--arrivals poisson needs --rate above 0")
	}
	if (set["rate"] || set["warmup"]) && f.arrivals != bench.ArrivalsPoisson {
		return errors.New("--rate and --warmup go with --arrivals poisson")
	}
	for _, name := range []string{"p99", "window", "capacity-start", "capacity-max", "capacity-repeat"} {
		if set[name] && !f.capacity {
			return fmt.Errorf("--%s goes with --find-capacity", name)
		}
	}
	return nil
}

// config is the bench's configuration: this binary's serve when it starts
// a server, and the server log opened; closeLog closes it.
func (f *benchFlags) config(stderr io.Writer) (cfg bench.Config, closeLog func(), err error) {
	cfg = bench.Config{
		Server: strings.TrimRight(f.server, "/"), Token: f.token, DatabaseURL: f.dbURL, Demo: f.demo,
		MaxTurns: f.maxTurns, Question: f.question, StatsSettle: f.settle, History: f.history,
		Replicas: f.replicas, Pooler: f.pooler,
		Progress: stderr, ProgressTTY: isTerminal(stderr),
	}
	if cfg.Server == "" {
		exe, err := os.Executable()
		if err != nil {
			return cfg, nil, fmt.Errorf("finding the toolmark binary to start a server: %w", err)
		}
		cfg.Command = []string{exe, "serve"}
	}
	closeLog = func() {}
	if f.serverLog != "" {
		lf, err := os.OpenFile(f.serverLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return cfg, nil, err
		}
		cfg.ServerLog = lf
		closeLog = func() { lf.Close() }
	}
	return cfg, closeLog, nil
}

// mode is what the flags ask the bench to run; steps is --sweep's list.
func (f *benchFlags) mode(steps []int) benchMode {
	return benchMode{
		idle: f.idle, streams: f.streams, idleTurns: f.idleTurns,
		steps: steps, table: f.table, plot: f.plot,
		load: bench.Load{Turns: f.turns, Concurrency: f.conc, Followers: f.followers,
			Arrivals: f.arrivals, Rate: f.rate, Warmup: f.warmup, Render: f.render, Protocols: splitList(f.protocols)},
		capacity: capacityFlag(f.capacity, bench.CapacityLoad{Target: f.p99, Window: f.window, Followers: f.followers, Start: f.capStart, Max: f.capMax, Repeat: f.capRepeat}),
	}
}

// splitList splits a comma-separated flag value, leaving out empty items.
func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// writeBenchReport writes rep on stdout, as JSON or as text, and returns
// its problems as an error.
func writeBenchReport(stdout io.Writer, rep benchReport, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else if err := rep.WriteText(stdout); err != nil {
		return err
	}
	if p := rep.Problems(); len(p) > 0 {
		return errors.New(strings.Join(p, "; "))
	}
	return nil
}

// benchReport is what every kind of run reports: *bench.Report,
// *bench.SweepReport and *bench.IdleReport.
type benchReport interface {
	WriteText(io.Writer) error
	Problems() []string
}

// benchMode is what the flags ask the bench to run.
type benchMode struct {
	idle               bool
	streams, idleTurns int
	steps              []int
	table, plot        string
	load               bench.Load
	capacity           *bench.CapacityLoad // --find-capacity
}

// capacityFlag returns c when --find-capacity is set, else nil.
func capacityFlag(on bool, c bench.CapacityLoad) *bench.CapacityLoad {
	if !on {
		return nil
	}
	return &c
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// runBenchMode runs the idle measurement, the sweep or one load. With an
// error it returns the figures measured before it, if any, or nil.
func runBenchMode(ctx context.Context, b *bench.Bench, m benchMode) (benchReport, error) {
	switch {
	case m.idle:
		rep, err := b.Idle(ctx, bench.IdleLoad{Streams: m.streams, Turns: m.idleTurns, Render: m.load.Render})
		if err != nil {
			return nil, err
		}
		return rep, nil
	case m.capacity != nil:
		rep, err := b.FindCapacity(ctx, *m.capacity)
		if rep == nil {
			return nil, err
		}
		return rep, err
	case len(m.steps) > 0:
		rep, err := b.Sweep(ctx, m.steps, m.load.Followers)
		if len(rep.Steps) == 0 {
			return nil, err
		}
		// The steps done are written even when a later one failed.
		if m.table != "" {
			if werr := os.WriteFile(m.table, []byte(rep.Table()), 0o644); werr != nil && err == nil {
				err = werr
			}
		}
		if m.plot != "" {
			if perr := rep.Plot(m.plot); perr != nil && err == nil {
				err = perr
			}
		}
		return rep, err
	}
	rep, err := b.Run(ctx, m.load)
	if rep == nil {
		return nil, err
	}
	return rep, err
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
