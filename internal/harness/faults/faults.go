// Package faults is toolmark's fault-injection suite. It mocks nothing: it
// starts real `toolmark serve` processes from a binary built from the tree,
// against a real PostgreSQL (an embedded server it starts and may restart,
// or a fresh database on a given server), drives them over HTTP as clients
// do, injects faults and checks what clients would notice.
//
// # Scenarios
//
//   - kill: kill -9 of a replica at random points of running turns and 0–30
//     ms after bursts of turn requests, then a restart. Every turn must be
//     final within 5 s of the restart, no conversation may refuse a new turn,
//     no tool-call row may lack its events, and every event a follower
//     received before the kill must be in the log, identical.
//   - takeover: kill -9 of the replica running turns while a second replica
//     serves their followers: the time from the kill to the turn's terminal
//     event, or to the turn going on elsewhere.
//   - pgrestart: PostgreSQL stopped and started again while turns run and
//     clients keep calling every route: no 5xx but 503, and the turns
//     complete once the database is back.
//   - resume: followers that drop their stream at random and resume with
//     Last-Event-ID, on either of two replicas: no duplicate, no gap, and
//     what they end with is the log.
//   - hostile: malformed, null, oversized and invalid UTF-8 bodies, unknown
//     ids and another user's ids: no 5xx, the documented status, and 404 for
//     every foreign id.
//   - drain: SIGTERM of one of three replicas with followers attached: the
//     longest a follower waits for an event, whether the draining replica's
//     turns finish, how soon /readyz says 503, whether it still accepts
//     streams, and how long cancelling one of its turns takes.
//   - pooled: takeover (with three replicas) and drain again, the replicas
//     reaching PostgreSQL through PgBouncer in transaction mode, with a
//     direct URL and without one (pooled.go).
//
// Run returns a Report: one Criterion per check, with the measured value, the
// bound and the outcome, and the figures behind them (turns killed, events
// checked, time to the terminal state, requests tried, 5xx seen).
// docs/reliability.md describes the suite and holds its figures.
package faults

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
)

// Config sets what Run does. Short and Full return the two standard sets of
// counts.
type Config struct {
	Bin         string   // the toolmark binary to run
	DatabaseURL string   // a PostgreSQL server to use; "" starts an embedded one
	WorkDir     string   // replica logs and the embedded server's data
	Seed        uint64   // seeds the random choices; 0 picks one
	Only        []string // scenarios to run (kill, takeover, pgrestart, resume, hostile, drain, pooled); empty runs all
	Progress    io.Writer

	KillRounds int           // kill -9 rounds, alternately in the burst window and at a random point
	KillBurst  int           // turn requests per burst
	KillSettle time.Duration // how long turns left behind may take to end before the final checks

	TakeoverRounds  int
	TakeoverTurns   int           // turns running on the killed replica per round
	TakeoverTimeout time.Duration // a turn not taken over by then counts as this long

	PGRounds int           // PostgreSQL restarts
	PGDown   time.Duration // how long PostgreSQL stays down
	PGSettle time.Duration // how long turns may take to end once it is back

	ResumeCycles int // disconnect/resume cycles at least

	Hostile int // hostile requests at least

	DrainRounds int
	DrainGrace  time.Duration // --shutdown-grace of the drained replica
}

// Scenarios lists the scenario names in the order Run runs them.
var Scenarios = []string{"kill", "takeover", "pgrestart", "resume", "hostile", "drain", "pooled"}

// Short returns the counts of the short form that CI runs after the tests.
func Short() Config {
	return Config{
		KillRounds: 4, KillBurst: 16, KillSettle: 15 * time.Second,
		TakeoverRounds: 1, TakeoverTurns: 3, TakeoverTimeout: 30 * time.Second,
		PGRounds: 1, PGDown: 2 * time.Second, PGSettle: 30 * time.Second,
		ResumeCycles: 60,
		Hostile:      200,
		DrainRounds:  1, DrainGrace: 5 * time.Second,
	}
}

// Full returns the counts that docs/reliability.md reports.
func Full() Config {
	return Config{
		KillRounds: 50, KillBurst: 16, KillSettle: 30 * time.Second,
		TakeoverRounds: 10, TakeoverTurns: 3, TakeoverTimeout: 30 * time.Second,
		PGRounds: 3, PGDown: 3 * time.Second, PGSettle: 30 * time.Second,
		ResumeCycles: 600,
		Hostile:      600,
		DrainRounds:  3, DrainGrace: 5 * time.Second,
	}
}

// suite is one run: the cluster it drives, its randomness and its report.
type suite struct {
	cfg    Config
	cl     *cluster
	report *Report
	rngMu  sync.Mutex
	rng    *rand.Rand
	// variant names how the replicas reach the database when it is not
	// the usual way, after the scenario's name in the report (pooled.go).
	variant string
}

// Run runs the scenarios of cfg and returns their report. An error means the
// suite could not run (no binary, no database), not that a criterion failed.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	if cfg.Seed == 0 {
		cfg.Seed = rand.Uint64()
	}
	for _, name := range cfg.Only {
		if !slices.Contains(Scenarios, name) {
			return nil, fmt.Errorf("unknown scenario %q (have %s)", name, strings.Join(Scenarios, ", "))
		}
	}
	s := &suite{cfg: cfg, report: &Report{Started: time.Now(), Seed: cfg.Seed}, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))}
	cl, err := newCluster(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s.cl = cl
	defer cl.close()
	s.progress("seed %d, work dir %s, database %s", cfg.Seed, cfg.WorkDir, cl.describeDB())
	runs := map[string]func(context.Context) error{
		"kill": s.kill, "takeover": s.takeover, "pgrestart": s.pgRestart,
		"resume": s.resume, "hostile": s.hostile, "drain": s.drain, "pooled": s.pooled,
	}
	for _, name := range Scenarios {
		if len(cfg.Only) > 0 && !slices.Contains(cfg.Only, name) {
			continue
		}
		start := time.Now()
		s.progress("%s: start", name)
		err := runs[name](ctx)
		cl.stopAll()
		if ctx.Err() != nil {
			return s.report, ctx.Err()
		}
		if err != nil {
			// A scenario that could not run fails as a whole; the others
			// still run.
			s.report.add(Criterion{Scenario: name, Name: "scenario ran to the end", Measured: err.Error(), Bound: "no error", Status: Fail})
		}
		s.progress("%s: done in %s", name, time.Since(start).Round(100*time.Millisecond))
	}
	s.report.Duration = time.Since(s.report.Started)
	return s.report, nil
}

// setup creates a user for a scenario and starts its replicas.
func (s *suite) setup(ctx context.Context, scenario string, sv serve, names ...string) (user, []*replica, error) {
	u, err := s.user(ctx, scenario)
	if err != nil {
		return u, nil, err
	}
	reps := make([]*replica, len(names))
	for i, n := range names {
		if reps[i], err = s.cl.start(ctx, n, sv); err != nil {
			return u, nil, err
		}
	}
	return u, reps, nil
}

// progress writes one progress line.
func (s *suite) progress(format string, args ...any) {
	fmt.Fprintf(s.cfg.Progress, "%s faults: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// intn returns a random int in [0, n).
func (s *suite) intn(n int) int {
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	return s.rng.IntN(n)
}

// between returns a random duration in [lo, hi).
func (s *suite) between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	return lo + time.Duration(s.rng.Int64N(int64(hi-lo)))
}

// prompts are questions the demo model answers with tool calls: a search, a
// research question with sub-agents, a multi-part question with a todo list.
var prompts = []string{
	"How does resume work?",
	"Research how leases work and compare them with advisory locks",
	"What is toolmark? And how are tool calls rendered? And what happens after a crash?",
	"How are events stored and pruned?",
}

func (s *suite) prompt() string { return prompts[s.intn(len(prompts))] }
