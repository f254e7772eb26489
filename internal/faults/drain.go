package faults

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolmark/toolmark/internal/bench"
)

// drainFollower is a follower of the drain scenario and where it started.
type drainFollower struct {
	*follower
	via, turnOn string // replica names
}

// drain sends SIGTERM to one of three replicas while turns run on all
// three and followers are attached to each, through the draining replica
// and through the others. Followers reconnect 100 ms after a stream ends,
// to a replica that is not draining, as behind a load balancer that stops
// routing to it. It measures the longest wait of a follower for an event
// written after the SIGTERM, whether the draining replica's turns finish,
// how soon its /readyz stops answering 200, whether it still opens new
// streams, and how long cancelling one of its turns takes.
func (s *suite) drain(ctx context.Context) error {
	const sc = "drain"
	cfg := s.cfg
	// Turns of 12–16 s: longer than the grace once under way, so the
	// draining replica's turns can only finish by going on elsewhere.
	sv := serve{pace: 100 * time.Millisecond, grace: cfg.DrainGrace}
	u, reps, err := s.setup(ctx, sc, sv, "drain-a0", "drain-b", "drain-c")
	if err != nil {
		return err
	}
	var worst time.Duration
	worstWhere := ""
	var readyz, cancels, exits []time.Duration
	readyzNever, accepted, followersN, eventsAfter := 0, 0, 0, 0
	aTurns, aCompleted := 0, 0
	outcomes := map[string]int{}
	for round := 1; round <= cfg.DrainRounds; round++ {
		a := reps[0]
		var draining atomic.Bool
		pick := func() string {
			if draining.Load() {
				return reps[1+s.intn(2)].URL
			}
			return reps[s.intn(3)].URL
		}
		fctx, stop := context.WithCancel(ctx)
		var dfs []drainFollower
		var onA []string // turns of the draining replica: the last is cancelled
		turnFollowers := map[string][]*follower{}
		for i, on := range []int{0, 0, 0, 1, 1, 2, 2} {
			_, id, err := u.startTurn(ctx, reps[on].URL, s.longPrompt())
			if err != nil {
				stop()
				return err
			}
			if on == 0 {
				onA = append(onA, id)
			}
			for _, via := range []int{0, 1 + i%2} {
				f := &follower{u: u, turnID: id}
				dfs = append(dfs, drainFollower{follower: f, via: reps[via].name, turnOn: reps[on].name})
				turnFollowers[id] = append(turnFollowers[id], f)
				go followLoop(fctx, f, reps[via].URL, pick)
			}
		}
		waitFor(ctx, time.Now().Add(15*time.Second), func() bool {
			for _, df := range dfs {
				if !inProgress(df.follower) && !df.isDone() {
					return false
				}
			}
			return true
		})
		// A random moment, so that the SIGTERM and the cancel below fall
		// anywhere in the replica's periodic work (lease renewal, sweeps).
		time.Sleep(s.between(500*time.Millisecond, 3*time.Second))

		a.Terminate()
		sigAt := time.Now()
		draining.Store(true)
		var wg sync.WaitGroup
		var notReadyAt time.Time
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(sigAt) < cfg.DrainGrace+30*time.Second {
				st, _, err := s.cl.status(ctx, a.URL, "", "GET", "/readyz", nil)
				if err != nil || st != 200 {
					notReadyAt = time.Now()
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
		time.Sleep(300 * time.Millisecond)
		if st := s.tryStream(ctx, u, a.URL, onA[0]); st == 200 {
			accepted++
		}
		time.Sleep(s.between(0, 1200*time.Millisecond))
		cancelID := onA[len(onA)-1]
		cancelAt := time.Now()
		if _, err := u.api(reps[1].URL).CancelTurn(ctx, cancelID); err != nil {
			stop()
			return fmt.Errorf("cancelling a turn of the draining replica: %w", err)
		}
		waitFor(ctx, sigAt.Add(cfg.DrainGrace+40*time.Second), func() bool {
			for _, df := range dfs {
				if !df.isDone() {
					return false
				}
			}
			return true
		})
		endAt := time.Now()
		stop()
		select {
		case <-a.Done():
		case <-time.After(cfg.DrainGrace + 30*time.Second):
			a.Kill()
		}
		exitAt := time.Now()
		exits = append(exits, exitAt.Sub(sigAt))
		wg.Wait()
		if notReadyAt.IsZero() {
			readyzNever++
		} else {
			readyz = append(readyz, notReadyAt.Sub(sigAt))
		}

		cancelled := time.Duration(-1)
		for _, f := range turnFollowers[cancelID] {
			f.mu.Lock()
			if f.done && (cancelled < 0 || f.doneAt.Sub(cancelAt) < cancelled) {
				cancelled = f.doneAt.Sub(cancelAt)
			}
			f.mu.Unlock()
		}
		if cancelled < 0 {
			cancelled = endAt.Sub(cancelAt)
		}
		cancels = append(cancels, cancelled)

		for _, df := range dfs {
			followersN++
			lat, n := stallOf(df.follower, sigAt, endAt)
			eventsAfter += n
			if lat > worst {
				worst, worstWhere = lat, fmt.Sprintf("a follower through %s of a turn running on %s", df.via, df.turnOn)
			}
		}
		rows, err := s.cl.turnRows(ctx, onA[:len(onA)-1])
		if err != nil {
			return err
		}
		for _, id := range onA[:len(onA)-1] {
			aTurns++
			row := rows[id]
			switch {
			case row.Status != "completed":
				outcomes[row.Status]++
			case row.Finished != nil && row.Finished.Before(exitAt):
				aCompleted++
				outcomes["completed before the replica exited"]++
			default:
				aCompleted++
				outcomes["completed elsewhere"]++
			}
		}
		s.progress("drain %d/%d: SIGTERM; longest follower stall so far %s; /readyz not 200 after %s; replica exited after %s; cancel took %s",
			round, cfg.DrainRounds, ms(worst), msOr(notReadyAt, sigAt), ms(exitAt.Sub(sigAt)), ms(cancelled))
		if reps[0], err = s.cl.start(ctx, fmt.Sprintf("drain-a%d", round), sv); err != nil {
			return err
		}
	}
	rp := s.report
	rp.check(sc, "longest follower stall after SIGTERM", worst <= time.Second, ms(worst), "≤ 1000 ms", worstWhere)
	rp.check(sc, "turns of the draining replica that finished (there or elsewhere)", aCompleted == aTurns,
		fmt.Sprintf("%d of %d", aCompleted, aTurns), fmt.Sprintf("%d of %d", aTurns, aTurns), countsDetail(outcomes))
	rmax, never := bench.Summarize(readyz).Max, ""
	if readyzNever > 0 {
		never = fmt.Sprintf("%d drains where it answered 200 until the end", readyzNever)
	}
	rp.check(sc, "time from SIGTERM to /readyz not answering 200, max", readyzNever == 0 && rmax <= time.Second, ms(rmax), "≤ 1000 ms", never)
	rp.atMost(sc, "new event streams opened by the draining replica", accepted, 0, "")
	cmax := bench.Summarize(cancels).Max
	rp.check(sc, "time to cancel a turn of the draining replica, max", cmax <= time.Second, ms(cmax), "≤ 1000 ms", "")
	rp.figure(sc, "drains / followers / events delivered after SIGTERM", "%d / %d / %d", cfg.DrainRounds, followersN, eventsAfter)
	rp.figure(sc, "time from SIGTERM to the replica's exit, max", "%s (grace %s)", ms(bench.Summarize(exits).Max), cfg.DrainGrace)
	return nil
}

// stallOf returns the longest time a follower waited for an event written
// after since (the event's time, or since when it was written before), and
// how many such events it got. A follower without its terminal event at end
// has waited until end.
func stallOf(f *follower, since, end time.Time) (time.Duration, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var worst time.Duration
	n := 0
	lastWritten := since
	for _, fr := range f.frames {
		if !fr.At.After(since) {
			continue
		}
		n++
		written := fr.Time
		if written.Before(since) {
			written = since
		}
		if d := fr.At.Sub(written); d > worst {
			worst = d
		}
		if fr.Time.After(lastWritten) {
			lastWritten = fr.Time
		}
	}
	if !f.done {
		if d := end.Sub(lastWritten); d > worst {
			worst = d
		}
	}
	return worst, n
}

// tryStream opens an event stream on base and returns its status (0 when
// the connection failed).
func (s *suite) tryStream(ctx context.Context, u user, base, turnID string) int {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	resp, err := u.openStream(ctx, base, turnID, 0)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func msOr(t, since time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return ms(t.Sub(since))
}
