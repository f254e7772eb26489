package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/bench"
	"github.com/toolmark/toolmark/runner"
)

// longPrompts make turns of several seconds, so that a fault lands while
// they run.
var longPrompts = prompts[1:3]

func (s *suite) longPrompt() string { return longPrompts[s.intn(len(longPrompts))] }

// followLoop follows a turn on base until its terminal event or ctx is
// done, reconnecting 100 ms after a stream ends, as a client does. pick, when
// not nil, chooses the replica of each reconnection.
func followLoop(ctx context.Context, f *follower, base string, pick func() string) {
	for ctx.Err() == nil && !f.isDone() {
		_, _ = f.connect(ctx, base)
		if pick != nil {
			base = pick()
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// inProgress reports whether a follower has seen the turn well under way
// and not ended.
func inProgress(f *follower) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return false
	}
	for _, fr := range f.frames {
		if fr.Type == toolmark.EventToolCallRunning {
			return true
		}
	}
	return len(f.frames) >= 10
}

// waitFor polls cond every 20 ms until it holds or the deadline passes.
func waitFor(ctx context.Context, deadline time.Time, cond func() bool) bool {
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// takeover kills, with kill -9, the replica running turns whose followers
// are served by a second replica, and measures the time from the kill to
// the first event written after it: the terminal event of a turn finalised
// elsewhere, or the next event of a turn that goes on elsewhere.
func (s *suite) takeover(ctx context.Context) error {
	cfg := s.cfg
	sv := serve{pace: 40 * time.Millisecond, grace: quickStop}
	names := []string{"takeover-a0", "takeover-b"}
	if s.cl.pooler != nil {
		names = append(names, "takeover-c") // a third replica races b for the turns
	}
	u, reps, err := s.setup(ctx, "takeover", sv, names...)
	if err != nil {
		return err
	}
	bUp := time.Now() // b is up and serving by now
	t := &takeoverRun{s: s, u: u, a: reps[0], b: reps[1], how: map[string]int{}}
	// A replica takes another's missing liveness lock for its death only
	// once it has held its own for a few seconds (after an outage the
	// others need a moment to take theirs again); the scenario measures a
	// replica dying beside one that has been up that long.
	time.Sleep(time.Until(bUp.Add(runner.LivenessTrustAfter)))
	for r := 1; r <= cfg.TakeoverRounds; r++ {
		if err := t.round(ctx, r); err != nil {
			return err
		}
		if t.a, err = s.cl.start(ctx, fmt.Sprintf("takeover-a%d", r), sv); err != nil {
			return err
		}
	}
	t.report()
	return nil
}

// takeoverRun is the takeover scenario's state across its rounds: a, the
// replica killed in each round, b, the one serving the followers, and what
// was measured.
type takeoverRun struct {
	s    *suite
	u    user
	a, b *replica

	times                    []time.Duration // from the kill to the first event after it
	timedOut, finishedBefore int
	badLogs                  int // turns run twice or left without an end (logFaults)
	badLogsEx                []string
	how                      map[string]int // how turns went on
}

// round starts TakeoverTurns turns on a, followed through b, kills a
// once they are under way, and records when each went on.
func (t *takeoverRun) round(ctx context.Context, r int) error {
	s, cfg := t.s, t.s.cfg
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	var fs []*follower
	for i := 0; i < cfg.TakeoverTurns; i++ {
		_, id, err := t.u.startTurn(ctx, t.a.URL, s.longPrompt())
		if err != nil {
			return err
		}
		f := &follower{u: t.u, turnID: id}
		fs = append(fs, f)
		go followLoop(fctx, f, t.b.URL, nil)
	}
	waitFor(ctx, time.Now().Add(15*time.Second), func() bool {
		for _, f := range fs {
			if !inProgress(f) && !f.isDone() {
				return false
			}
		}
		return true
	})
	time.Sleep(s.between(0, time.Second))
	t.a.Kill()
	killAt := time.Now()
	deadline := killAt.Add(cfg.TakeoverTimeout)
	found := firstEventsAfter(ctx, fs, killAt, deadline)
	// How each turn went on: wait for its terminal event too.
	waitFor(ctx, deadline, func() bool {
		for _, f := range fs {
			if !f.isDone() {
				return false
			}
		}
		return true
	})
	stop()
	bad, ex := logFaults(fs)
	t.badLogs += bad
	t.badLogsEx = append(t.badLogsEx, ex...)
	line := t.record(fs, found, killAt)
	s.progress("takeover %d/%d: %d turns on the killed replica: %v", r, cfg.TakeoverRounds, len(fs), line)
	return nil
}

// firstEventsAfter waits until the deadline for each follower's first
// event written after the kill, or its terminal event, and returns them
// (nil for a follower that got none).
func firstEventsAfter(ctx context.Context, fs []*follower, killAt, deadline time.Time) []*frame {
	found := make([]*frame, len(fs))
	waitFor(ctx, deadline, func() bool {
		all := true
		for i, f := range fs {
			if found[i] != nil {
				continue
			}
			for _, fr := range f.snapshot() {
				if fr.Time.After(killAt) || fr.Type.Terminal() {
					fr := fr
					found[i] = &fr
					break
				}
			}
			if found[i] == nil {
				all = false
			}
		}
		return all
	})
	return found
}

// record adds a round's turns to the measures and returns what each
// showed, for the progress line.
func (t *takeoverRun) record(fs []*follower, found []*frame, killAt time.Time) []string {
	var line []string
	for i := range fs {
		fr := found[i]
		switch {
		case fr == nil:
			t.timedOut++
			t.times = append(t.times, t.s.cfg.TakeoverTimeout)
			line = append(line, "not taken over")
		case !fr.Time.After(killAt):
			t.finishedBefore++
			line = append(line, "ended before the kill")
		default:
			d := fr.At.Sub(killAt)
			t.times = append(t.times, d)
			t.how[takeoverHow(fs[i].snapshot(), killAt)]++
			line = append(line, ms(d))
		}
	}
	return line
}

// report adds the takeover scenario's criteria and figures to the report.
func (t *takeoverRun) report() {
	sc := "takeover" + t.s.variant
	cfg, rp := t.s.cfg, t.s.report
	p50Bound, maxBound := t.s.takeoverBounds()
	rp.atLeast(sc, "turns running on the replica when it was killed", len(t.times), 1, fmt.Sprintf("all %d turns ended before the kill: nothing was tested", t.finishedBefore))
	sum := bench.Summarize(t.times)
	p50, mx := sum.P50, sum.Max
	rp.check(sc, "time from kill -9 to the turn's terminal event or continuation elsewhere, p50", p50 <= p50Bound,
		ms(p50), "≤ "+ms(p50Bound), fmt.Sprintf("%d turns; first event after the kill: %s", len(t.times), countsDetail(t.how)))
	late := ""
	if t.timedOut > 0 {
		late = fmt.Sprintf("%d turns not taken over within %s", t.timedOut, cfg.TakeoverTimeout)
	}
	rp.check(sc, "same, max", mx <= maxBound, ms(mx), "≤ "+ms(maxBound), late)
	rp.atMost(sc, "turns run twice or without exactly one end (seqs with a gap or a duplicate, terminal events ≠ 1)", t.badLogs, 0, examples(t.badLogsEx))
	rp.figure(sc, "rounds / turns killed", "%d / %d (%d ended before the kill, not counted)", cfg.TakeoverRounds, len(t.times), t.finishedBefore)
}

// takeoverHow says how a turn went on after its replica was killed:
// finalised at once (only tool_call_error and the terminal event written
// after the kill) or continued, and how it ended.
func takeoverHow(frames []frame, killAt time.Time) string {
	continued := false
	end := "no terminal event yet"
	for _, fr := range frames {
		if !fr.Time.After(killAt) {
			continue
		}
		switch {
		case fr.Type.Terminal():
			var e struct {
				Data toolmark.TurnEndData `json:"data"`
			}
			_ = json.Unmarshal([]byte(fr.Data), &e)
			end = fmt.Sprintf("%s (%s)", fr.Type, e.Data.Status)
		case fr.Type != toolmark.EventToolCallError:
			continued = true
		}
	}
	if continued {
		return "continued elsewhere, then " + end
	}
	return "finalised elsewhere: " + end
}
