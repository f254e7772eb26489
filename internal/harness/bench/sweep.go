package bench

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// SweepReport is one Report per step of a sweep, in the order run.
type SweepReport struct {
	Steps []*Report `json:"steps"`
}

// Sweep runs one load per step, steps[i] turns all started at once with
// followers streams each, on a fresh server per step when the bench starts
// its servers. When a step fails it returns the steps done so far with the
// error.
func (b *Bench) Sweep(ctx context.Context, steps []int, followers int) (*SweepReport, error) {
	rep := &SweepReport{}
	for i, n := range steps {
		b.out.say("step %d of %d: %d concurrent turns", i+1, len(steps), n)
		r, err := b.Run(ctx, Load{Turns: n, Concurrency: n, Followers: followers})
		if r != nil && err == nil {
			rep.Steps = append(rep.Steps, r)
		}
		if err != nil {
			return rep, fmt.Errorf("step of %d turns: %w", n, err)
		}
	}
	return rep, nil
}

// Problems lists the problems of every step, each named by its step.
func (s *SweepReport) Problems() []string {
	var p []string
	for _, r := range s.Steps {
		for _, q := range r.Problems() {
			p = append(p, fmt.Sprintf("%d turns: %s", r.Turns, q))
		}
	}
	return p
}

// WriteText writes every step's report, then the table.
func (s *SweepReport) WriteText(w io.Writer) error {
	for _, r := range s.Steps {
		if err := r.WriteText(w); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	_, err := io.WriteString(w, s.Table())
	return err
}

// Table returns the sweep as a Markdown table: latencies (delivery, first
// event, first token), whole-turn time against the unloaded turn,
// integrity and costs per step.
func (s *SweepReport) Table() string {
	var b strings.Builder
	b.WriteString("| concurrent turns | delivery p50 | p95 | p99 | first event p50 | p95 | p99 | first token p50 | p95 | p99 | whole turn p50 (÷ alone) | failed | gaps / dups | events/s | tx / turn | WAL / turn (÷ answer) | server CPU / turn | server peak RSS |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	na := "n/a"
	for _, r := range s.Steps {
		tx, wal, cpu, rss := na, na, na, na
		if p := r.Postgres; p != nil {
			tx = fmt.Sprintf("%.1f", p.XactsPerTurn)
			wal = fmt.Sprintf("%s (%.0f×)", fmtBytes(p.WALPerTurn), p.WALPerAnswerByte)
		}
		if c := r.ServerCost; c != nil {
			cpu, rss = fmtDur(time.Duration(c.CPUPerTurn)), fmtBytes(float64(c.PeakRSS))
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s (%.2f×) | %d | %d / %d | %.0f | %s | %s | %s | %s |\n",
			r.Turns, fmtDur(r.Delivery.P50), fmtDur(r.Delivery.P95), fmtDur(r.Delivery.P99),
			fmtDur(r.FirstEvent.P50), fmtDur(r.FirstEvent.P95), fmtDur(r.FirstEvent.P99),
			fmtDur(r.FirstToken.P50), fmtDur(r.FirstToken.P95), fmtDur(r.FirstToken.P99),
			fmtDur(r.WholeTurn.P50), r.WholeTurnRatioP50, r.Failed, r.Gaps, r.Duplicates, r.EventsPerSecond,
			tx, wal, cpu, rss)
	}
	return b.String()
}
