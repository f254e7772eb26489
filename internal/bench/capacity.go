package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
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
	if c.Target < 0 || c.Window < time.Second || c.Start < 1 || c.Max < c.Start || c.Refine < 0 || c.Followers < 0 {
		return c, errors.New("a capacity search needs a positive target, a window of at least 1 s and 1 ≤ start ≤ max")
	}
	return c, nil
}

// CapacityReport is what a capacity search found: every step run, in the
// order run, and the best one that passed.
type CapacityReport struct {
	Target   Duration  `json:"targetP99Ms"`
	Unloaded Duration  `json:"unloadedTurnMs"` // the turn alone, which sets each step's rate
	Steps    []*Report `json:"steps"`
	// Best is the step with the most turns in flight whose delivery p99
	// stayed under the target with no failure, gap or duplicate; nil when
	// none did.
	Best *Report `json:"best,omitempty"`
	// Capacity is Best's mean number of turns in flight.
	Capacity float64 `json:"capacity"`
}

// FindCapacity searches for the highest steady concurrency whose live
// delivery p99 stays under c.Target with Poisson arrivals: a step at
// concurrency n runs turns arriving at n ÷ the unloaded turn's duration
// per second for c.Window, leaving out of its latencies the turns that
// arrive in the first unloaded-turn duration (at most a quarter of the
// window), while the number in flight rises. A step passes when its p99 is under the target and nothing
// failed.
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
		b.out.say("capacity step %d: %d turns in flight (%.3g turns/s for %v, %d turns)", len(rep.Steps)+1, n, rate, c.Window, turns)
		r, err := b.Run(ctx, Load{Turns: turns, Followers: c.Followers, Arrivals: ArrivalsPoisson, Rate: rate, Warmup: min(unloaded, c.Window/4)})
		if r == nil {
			return false, err
		}
		rep.Steps = append(rep.Steps, r)
		ok := err == nil && len(r.Problems()) == 0 && r.Delivery.N > 0 && r.Delivery.P99 <= c.Target
		b.out.say("capacity step %d: %.0f in flight, delivery p99 %s: %s", len(rep.Steps), r.InFlight, fmtDur(r.Delivery.P99), map[bool]string{true: "under the target", false: "over"}[ok])
		if ok && (rep.Best == nil || r.InFlight > rep.Best.InFlight) {
			rep.Best, rep.Capacity = r, r.InFlight
		}
		return ok, nil
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

// WriteText writes each step's line and the capacity found.
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

// Table returns the steps as a Markdown table.
func (c *CapacityReport) Table() string {
	var b strings.Builder
	b.WriteString("| turns in flight | turns/s | delivery p50 | p99 | first event p50 | p99 | failed / gaps / dups | server CPU / turn | PostgreSQL CPU / turn | tx / turn |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range c.Steps {
		cpu, pg, tx := "n/a", "n/a", "n/a"
		if s := r.ServerCost; s != nil {
			cpu = fmtDur(time.Duration(s.CPUPerTurn))
		}
		if p := r.Postgres; p != nil {
			tx = fmt.Sprintf("%.1f", p.XactsPerTurn)
			if p.CPU > 0 {
				pg = fmtDur(time.Duration(p.CPUPerTurn))
			}
		}
		fmt.Fprintf(&b, "| %.0f | %.3g | %s | %s | %s | %s | %d / %d / %d | %s | %s | %s |\n",
			r.InFlight, r.Rate, fmtDur(r.Delivery.P50), fmtDur(r.Delivery.P99), fmtDur(r.FirstEvent.P50), fmtDur(r.FirstEvent.P99),
			r.Failed, r.Gaps, r.Duplicates, cpu, pg, tx)
	}
	return b.String()
}
