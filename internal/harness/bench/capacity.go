package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// CapacityLoad is the shape of a capacity search: Poisson arrivals of the
// default turn at rising rates, each step for Window, until live delivery's
// p99 passes Target.
type CapacityLoad struct {
	// Target is the live-delivery p99 a step must stay under (default 50 ms).
	Target time.Duration
	// Window is how long turns arrive in each step (default 20 s).
	Window time.Duration
	// Followers is the number of streams per turn (default 1).
	Followers int
	// Start is the concurrency of the first step (default 50); each step
	// that passes doubles it, up to Max (default 4000); then Refine steps
	// (default 3) bisect between the last pass and the first failure.
	Start, Max, Refine int
	// Repeat is the most runs of a step (default 1). A step's p99 varies
	// from one run to the next at the same load (by a fifth on a small
	// machine), so a step whose first run is near the target (within half
	// to twice it) is run again, and passes when most of its runs do: its
	// runs stop once the majority is known (two that agree of three), and
	// of the runs that decided it, the one with the median p99 stands for it.
	Repeat int
}

func (c CapacityLoad) check() (CapacityLoad, error) {
	if c.Target == 0 {
		c.Target = 50 * time.Millisecond
	}
	if c.Window == 0 {
		c.Window = 20 * time.Second
	}
	if c.Start == 0 {
		c.Start = 50
	}
	if c.Max == 0 {
		c.Max = 4000
	}
	if c.Refine == 0 {
		c.Refine = 3
	}
	if c.Repeat == 0 {
		c.Repeat = 1
	}
	if c.Target < 0 || c.Window < time.Second || c.Start < 1 || c.Max < c.Start || c.Refine < 0 || c.Followers < 0 {
		return c, errors.New("a capacity search needs a positive target, a window of at least 1 s and 1 ≤ start ≤ max")
	}
	if c.Repeat < 1 || c.Repeat > 9 {
		return c, errors.New("a capacity search runs each step 1 to 9 times")
	}
	return c, nil
}

// CapacityReport is what a capacity search found: every run, in the order
// run, the steps they made up, and the best step that passed.
type CapacityReport struct {
	Target   Duration  `json:"targetP99Ms"`
	Unloaded Duration  `json:"unloadedTurnMs"` // the turn alone, which sets each step's rate
	Steps    []*Report `json:"steps"`          // every run
	// Searched are the steps: the runs of each concurrency tried and what
	// they decided.
	Searched []CapacityStep `json:"searched"`
	// Best is the run standing for the passing step with the most turns in
	// flight; nil when no step passed.
	Best *Report `json:"best,omitempty"`
	// Capacity is Best's mean number of turns in flight.
	Capacity float64 `json:"capacity"`
}

// CapacityStep is one concurrency of a capacity search and its runs.
type CapacityStep struct {
	Concurrency int    `json:"concurrency"` // turns in flight asked for (the rate is this ÷ the unloaded turn)
	Runs        []int  `json:"runs"`        // indexes in CapacityReport.Steps
	Passed      []bool `json:"passed"`      // each run: under the target, nothing failed
	Pass        bool   `json:"pass"`        // most runs passed
	Median      int    `json:"median"`      // the index in Steps of the run with the median p99 among those that decided the step
}

// runFailed reports whether r failed whatever its latency: an error, a
// turn or stream failed, lost or repeated, or nothing delivered.
func runFailed(r *Report, err error) bool {
	return err != nil || len(r.Problems()) > 0 || r.Delivery.N == 0
}

// runPasses reports whether r kept delivery p99 under target and did not
// fail.
func runPasses(r *Report, err error, target time.Duration) bool {
	return !runFailed(r, err) && r.Delivery.P99 <= target
}

// clearly reports whether a step's first run settles it alone: it failed,
// or its p99 is at most half the target or over twice it. Only runs near
// the target are repeated.
func clearly(r *Report, err error, target time.Duration) bool {
	p99 := time.Duration(r.Delivery.P99)
	return runFailed(r, err) || p99 <= target/2 || p99 > 2*target
}

// decided reports whether the outcomes of a step's runs so far settle it
// among at most repeat runs, and how: a majority of repeat passing or
// failing.
func decided(passed []bool, repeat int) (done, pass bool) {
	yes := 0
	for _, p := range passed {
		if p {
			yes++
		}
	}
	need := repeat/2 + 1
	switch {
	case yes >= need:
		return true, true
	case len(passed)-yes >= need || len(passed) >= repeat:
		return true, false // with an even repeat, a tie fails
	}
	return false, false
}

// medianRun returns which of runs (indexes in steps) has the median
// delivery p99, the higher of the two middle ones for an even count.
func medianRun(steps []*Report, runs []int) int {
	sorted := slices.Clone(runs)
	slices.SortStableFunc(sorted, func(a, b int) int { return cmp.Compare(steps[a].Delivery.P99, steps[b].Delivery.P99) })
	return sorted[len(sorted)/2]
}

// FindCapacity searches for the highest steady concurrency whose live
// delivery p99 stays under c.Target with Poisson arrivals: a step at
// concurrency n runs turns arriving at n ÷ the unloaded turn's duration
// per second for c.Window, leaving out of its latencies the turns that
// arrive in the first unloaded-turn duration (at most a quarter of the
// window), while the number in flight rises. A run passes when its p99 is
// under the target and nothing failed; a step of up to c.Repeat runs passes
// when most of its runs do.
func (b *Bench) FindCapacity(ctx context.Context, c CapacityLoad) (*CapacityReport, error) {
	c, err := c.check()
	if err != nil {
		return nil, err
	}
	b.out.say("measuring the turn alone to set the rates")
	cal, err := b.Run(ctx, Load{Turns: 1})
	if err != nil {
		return nil, fmt.Errorf("measuring the turn alone: %w", err)
	}
	unloaded := time.Duration(cal.UnloadedTurn)
	rep := &CapacityReport{Target: Duration(c.Target), Unloaded: Duration(unloaded)}
	pass, fail := 0, 0 // concurrencies of the best pass and of the lowest failure
	step := func(n int) (bool, error) {
		rate := float64(n) / unloaded.Seconds()
		turns := max(int(math.Ceil(rate*(c.Window.Seconds()))), 1)
		s := CapacityStep{Concurrency: n}
		for {
			b.out.say("capacity step %d, run %d: %d turns in flight (%.3g turns/s for %v, %d turns)", len(rep.Searched)+1, len(s.Runs)+1, n, rate, c.Window, turns)
			r, err := b.Run(ctx, Load{Turns: turns, Followers: c.Followers, Arrivals: ArrivalsPoisson, Rate: rate, Warmup: min(unloaded, c.Window/4)})
			if r == nil {
				return false, err
			}
			ok := runPasses(r, err, c.Target)
			s.Runs, s.Passed = append(s.Runs, len(rep.Steps)), append(s.Passed, ok)
			rep.Steps = append(rep.Steps, r)
			b.out.say("capacity step %d, run %d: %.0f in flight, delivery p99 %s: %s", len(rep.Searched)+1, len(s.Runs), r.InFlight, fmtDur(r.Delivery.P99), map[bool]string{true: "under the target", false: "over"}[ok])
			if len(s.Runs) == 1 && clearly(r, err, c.Target) {
				s.Pass = ok
				break
			}
			if done, pass := decided(s.Passed, c.Repeat); done {
				s.Pass = pass
				break
			}
		}
		agree := make([]int, 0, len(s.Runs)) // the runs that decided it
		for i, k := range s.Runs {
			if s.Passed[i] == s.Pass {
				agree = append(agree, k)
			}
		}
		s.Median = medianRun(rep.Steps, agree)
		rep.Searched = append(rep.Searched, s)
		if r := rep.Steps[s.Median]; s.Pass && (rep.Best == nil || r.InFlight > rep.Best.InFlight) {
			rep.Best, rep.Capacity = r, r.InFlight
		}
		return s.Pass, nil
	}
	for n := c.Start; ; n *= 2 {
		n = min(n, c.Max)
		ok, err := step(n)
		if err != nil {
			return rep, err
		}
		if !ok {
			fail = n
			break
		}
		pass = n
		if n == c.Max {
			return rep, nil
		}
	}
	for range c.Refine {
		if fail-pass <= max(pass/20, 1) {
			break
		}
		n := (pass + fail) / 2
		ok, err := step(n)
		if err != nil {
			return rep, err
		}
		if ok {
			pass = n
		} else {
			fail = n
		}
	}
	return rep, nil
}

// Problems is empty: a step over the target is what a capacity search
// looks for, not a failure. A search where no step passed reports that.
func (c *CapacityReport) Problems() []string {
	if c.Best == nil {
		return []string{fmt.Sprintf("no step kept live delivery p99 under %s", fmtDur(time.Duration(c.Target)))}
	}
	return nil
}

// bestStep returns the step Best stands for.
func (c *CapacityReport) bestStep() *CapacityStep {
	for i, s := range c.Searched {
		if c.Best != nil && c.Steps[s.Median] == c.Best {
			return &c.Searched[i]
		}
	}
	return nil
}

// WriteText writes each run's line and the capacity found.
func (c *CapacityReport) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "capacity search: live delivery p99 ≤ %s, Poisson arrivals of a turn that takes %s alone\n\n",
		fmtDur(time.Duration(c.Target)), fmtDur(time.Duration(c.Unloaded)))
	b.WriteString(c.Table())
	b.WriteString("\n")
	if c.Best == nil {
		b.WriteString("no step stayed under the target\n")
	} else {
		r := c.Best
		fmt.Fprintf(&b, "capacity: %.0f turns in flight (%.3g turns/s): delivery p50 %s, p99 %s; first event p99 %s",
			c.Capacity, r.Rate, fmtDur(r.Delivery.P50), fmtDur(r.Delivery.P99), fmtDur(r.FirstEvent.P99))
		if s := c.bestStep(); s != nil && len(s.Runs) > 1 {
			p99s := make([]string, len(s.Runs))
			for i, k := range s.Runs {
				p99s[i] = fmtDur(c.Steps[k].Delivery.P99)
			}
			fmt.Fprintf(&b, " (the median of %d runs, p99 %s)", len(s.Runs), strings.Join(p99s, ", "))
		}
		if s := r.ServerCost; s != nil {
			fmt.Fprintf(&b, "; server CPU %s per turn", fmtDur(time.Duration(s.CPUPerTurn)))
		}
		if p := r.Postgres; p != nil && p.CPU > 0 {
			fmt.Fprintf(&b, ", PostgreSQL CPU %s per turn", fmtDur(time.Duration(p.CPUPerTurn)))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Table returns the runs as a Markdown table, by step: a step's runs share
// its number, and the run standing for a step of several is marked with *.
func (c *CapacityReport) Table() string {
	var b strings.Builder
	b.WriteString("| step | turns in flight | turns/s | delivery p50 | p99 | first event p50 | p99 | failed / gaps / dups | commits' mean | server CPU / turn | PostgreSQL CPU / turn | tx / turn |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for k, s := range c.Searched {
		for _, i := range s.Runs {
			r := c.Steps[i]
			commits, cpu, pg, tx := "n/a", "n/a", "n/a", "n/a"
			if st := r.Stages; st != nil {
				commits = fmtDur(time.Duration(st.Commits.Mean))
			}
			if s := r.ServerCost; s != nil {
				cpu = fmtDur(time.Duration(s.CPUPerTurn))
			}
			if p := r.Postgres; p != nil {
				tx = fmt.Sprintf("%.1f", p.XactsPerTurn)
				if p.CPU > 0 {
					pg = fmtDur(time.Duration(p.CPUPerTurn))
				}
			}
			mark := ""
			if len(s.Runs) > 1 && i == s.Median {
				mark = "*"
			}
			fmt.Fprintf(&b, "| %d%s | %.0f | %.3g | %s | %s | %s | %s | %d / %d / %d | %s | %s | %s | %s |\n",
				k+1, mark, r.InFlight, r.Rate, fmtDur(r.Delivery.P50), fmtDur(r.Delivery.P99), fmtDur(r.FirstEvent.P50), fmtDur(r.FirstEvent.P99),
				r.Failed, r.Gaps, r.Duplicates, commits, cpu, pg, tx)
		}
	}
	return b.String()
}
