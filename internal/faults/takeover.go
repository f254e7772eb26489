package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/bench"
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
	const sc = "takeover"
	cfg := s.cfg
	sv := serve{pace: 40 * time.Millisecond, grace: quickStop}
	u, reps, err := s.setup(ctx, sc, sv, "takeover-a0", "takeover-b")
	if err != nil {
		return err
	}
	a, b := reps[0], reps[1]
	var times []time.Duration
	timedOut, finishedBefore := 0, 0
	how := map[string]int{}
	for r := 1; r <= cfg.TakeoverRounds; r++ {
		fctx, stop := context.WithCancel(ctx)
		var fs []*follower
		for i := 0; i < cfg.TakeoverTurns; i++ {
			_, id, err := u.startTurn(ctx, a.URL, s.longPrompt())
			if err != nil {
				stop()
				return err
			}
			f := &follower{u: u, turnID: id}
			fs = append(fs, f)
			go followLoop(fctx, f, b.URL, nil)
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
		a.Kill()
		killAt := time.Now()
		deadline := killAt.Add(cfg.TakeoverTimeout)
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
		var line []string
		for i := range fs {
			fr := found[i]
			switch {
			case fr == nil:
				timedOut++
				times = append(times, cfg.TakeoverTimeout)
				line = append(line, "not taken over")
			case !fr.Time.After(killAt):
				finishedBefore++
				line = append(line, "ended before the kill")
			default:
				d := fr.At.Sub(killAt)
				times = append(times, d)
				how[takeoverHow(fs[i].snapshot(), killAt)]++
				line = append(line, ms(d))
			}
		}
		s.progress("takeover %d/%d: %d turns on the killed replica: %v", r, cfg.TakeoverRounds, len(fs), line)
		if a, err = s.cl.start(ctx, fmt.Sprintf("takeover-a%d", r), sv); err != nil {
			return err
		}
	}
	rp := s.report
	rp.atLeast(sc, "turns running on the replica when it was killed", len(times), 1, fmt.Sprintf("all %d turns ended before the kill: nothing was tested", finishedBefore))
	sum := bench.Summarize(times)
	p50, mx := sum.P50, sum.Max
	rp.check(sc, "time from kill -9 to the turn's terminal event or continuation elsewhere, p50", p50 <= time.Second,
		ms(p50), "≤ 1000 ms", fmt.Sprintf("%d turns; first event after the kill: %s", len(times), countsDetail(how)))
	late := ""
	if timedOut > 0 {
		late = fmt.Sprintf("%d turns not taken over within %s", timedOut, cfg.TakeoverTimeout)
	}
	rp.check(sc, "same, max", mx <= 2*time.Second, ms(mx), "≤ 2000 ms", late)
	rp.figure(sc, "rounds / turns killed", "%d / %d (%d ended before the kill, not counted)", cfg.TakeoverRounds, len(times), finishedBefore)
	return nil
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
