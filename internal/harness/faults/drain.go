package faults

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolmark/toolmark/internal/harness/bench"
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
	cfg := s.cfg
	// Turns of 12–16 s: longer than the grace once under way, so the
	// draining replica's turns can only finish by going on elsewhere.
	sv := serve{pace: 100 * time.Millisecond, grace: cfg.DrainGrace}
	u, reps, err := s.setup(ctx, "drain", sv, "drain-a0", "drain-b", "drain-c")
	if err != nil {
		return err
	}
	d := &drainRun{s: s, u: u, reps: reps, outcomes: map[string]int{}}
	for round := 1; round <= cfg.DrainRounds; round++ {
		if err := d.round(ctx, round); err != nil {
			return err
		}
		if d.reps[0], err = s.cl.start(ctx, fmt.Sprintf("drain-a%d", round), sv); err != nil {
			return err
		}
	}
	d.report()
	return nil
}

// drainRun is the drain scenario's state across its rounds: the replicas,
// the first of which is drained in each round, and what was measured.
type drainRun struct {
	s    *suite
	u    user
	reps []*replica

	worst                   time.Duration // the longest follower stall
	worstWhere              string
	readyz, cancels, exits  []time.Duration
	readyzNever, accepted   int // drains whose /readyz said 200 to the end; streams opened while draining
	followersN, eventsAfter int
	aTurns, aCompleted      int // the draining replica's turns (but the cancelled one), and those completed
	outcomes                map[string]int
}

// drainRound is one round of the drain scenario.
type drainRound struct {
	a             *replica // the replica drained
	draining      atomic.Bool
	dfs           []drainFollower
	onA           []string // turns of the draining replica: the last is cancelled
	turnFollowers map[string][]*follower

	sigAt, cancelAt, endAt, exitAt time.Time
	exited                         chan time.Time // when the drained replica's process ended
	notReadyAt                     time.Time      // zero when /readyz said 200 to the end
	readyzDone                     sync.WaitGroup
}

// round runs one drain: turns and followers on the three replicas, the
// SIGTERM of the first, a stream opened on it and the cancel of one of its
// turns, the wait for every follower, and the measures.
func (d *drainRun) round(ctx context.Context, round int) error {
	s, cfg := d.s, d.s.cfg
	dr := &drainRound{a: d.reps[0], turnFollowers: map[string][]*follower{}}
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	if err := d.startTurns(ctx, fctx, dr); err != nil {
		return err
	}
	waitFor(ctx, time.Now().Add(15*time.Second), dr.underWay)
	// A random moment, so that the SIGTERM and the cancel below fall
	// anywhere in the replica's periodic work (lease renewal, sweeps).
	time.Sleep(s.between(500*time.Millisecond, 3*time.Second))

	d.sigterm(ctx, dr)
	time.Sleep(300 * time.Millisecond)
	if st := s.tryStream(ctx, d.u, dr.a.URL, dr.onA[0]); st == 200 {
		d.accepted++
	}
	time.Sleep(s.between(0, 1200*time.Millisecond))
	dr.cancelAt = time.Now()
	if _, err := d.u.api(d.reps[1].URL).CancelTurn(ctx, dr.cancelID()); err != nil {
		return fmt.Errorf("cancelling a turn of the draining replica: %w", err)
	}
	waitFor(ctx, dr.sigAt.Add(cfg.DrainGrace+40*time.Second), dr.allDone)
	dr.endAt = time.Now()
	stop()
	d.waitExit(dr)
	dr.readyzDone.Wait()

	cancelled := d.measure(dr)
	if err := d.countOutcomes(ctx, dr); err != nil {
		return err
	}
	s.progress("drain %d/%d: SIGTERM; longest follower stall so far %s; /readyz not 200 after %s; replica exited after %s; cancel took %s",
		round, cfg.DrainRounds, ms(d.worst), msOr(dr.notReadyAt, dr.sigAt), ms(dr.exitAt.Sub(dr.sigAt)), ms(cancelled))
	return nil
}

// startTurns starts seven long turns, three on the replica to drain and
// two on each other, each with two followers (within fctx): one through
// the replica to drain, one through another.
func (d *drainRun) startTurns(ctx, fctx context.Context, dr *drainRound) error {
	for i, on := range []int{0, 0, 0, 1, 1, 2, 2} {
		_, id, err := d.u.startTurn(ctx, d.reps[on].URL, d.s.longPrompt())
		if err != nil {
			return err
		}
		if on == 0 {
			dr.onA = append(dr.onA, id)
		}
		for _, via := range []int{0, 1 + i%2} {
			f := &follower{u: d.u, turnID: id}
			dr.dfs = append(dr.dfs, drainFollower{follower: f, via: d.reps[via].name, turnOn: d.reps[on].name})
			dr.turnFollowers[id] = append(dr.turnFollowers[id], f)
			go followLoop(fctx, f, d.reps[via].URL, d.pick(dr))
		}
	}
	return nil
}

// pick returns the chooser of the replica a follower reconnects to: any of
// the three, or once the round's replica drains, one of the others.
func (d *drainRun) pick(dr *drainRound) func() string {
	return func() string {
		if dr.draining.Load() {
			return d.reps[1+d.s.intn(2)].URL
		}
		return d.reps[d.s.intn(3)].URL
	}
}

// sigterm sends SIGTERM to the round's replica and watches its /readyz
// until it stops answering 200 (dr.notReadyAt; dr.readyzDone when known).
func (d *drainRun) sigterm(ctx context.Context, dr *drainRound) {
	grace := d.s.cfg.DrainGrace
	dr.a.Terminate()
	dr.sigAt = time.Now()
	dr.exited = make(chan time.Time, 1)
	go func() {
		<-dr.a.Done()
		dr.exited <- time.Now()
	}()
	dr.draining.Store(true)
	dr.readyzDone.Add(1)
	go func() {
		defer dr.readyzDone.Done()
		for time.Since(dr.sigAt) < grace+30*time.Second {
			st, _, err := d.s.cl.status(ctx, dr.a.URL, "", "GET", "/readyz", nil)
			if err != nil || st != 200 {
				dr.notReadyAt = time.Now()
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
}

// waitExit waits for the drained replica to exit, and kills it when it
// has not 30 s after its grace; the exit time is when the process ended,
// however long the turns it handed over ran elsewhere after it.
func (d *drainRun) waitExit(dr *drainRound) {
	select {
	case dr.exitAt = <-dr.exited:
	case <-time.After(time.Until(dr.sigAt.Add(d.s.cfg.DrainGrace + 30*time.Second))):
		dr.a.Kill()
		dr.exitAt = time.Now()
	}
	d.exits = append(d.exits, dr.exitAt.Sub(dr.sigAt))
}

// measure records a round's time to /readyz not 200, time to cancel and
// follower stalls, and returns the time to cancel.
func (d *drainRun) measure(dr *drainRound) time.Duration {
	if dr.notReadyAt.IsZero() {
		d.readyzNever++
	} else {
		d.readyz = append(d.readyz, dr.notReadyAt.Sub(dr.sigAt))
	}
	cancelled := dr.cancelTime()
	d.cancels = append(d.cancels, cancelled)
	for _, df := range dr.dfs {
		d.followersN++
		lat, n := stallOf(df.follower, dr.sigAt, dr.endAt)
		d.eventsAfter += n
		if lat > d.worst {
			d.worst, d.worstWhere = lat, fmt.Sprintf("a follower through %s of a turn running on %s", df.via, df.turnOn)
		}
	}
	return cancelled
}

// countOutcomes counts how the draining replica's turns (but the
// cancelled one) ended: completed there before it exited, completed
// elsewhere, or not completed.
func (d *drainRun) countOutcomes(ctx context.Context, dr *drainRound) error {
	ids := dr.onA[:len(dr.onA)-1]
	rows, err := d.s.cl.turnRows(ctx, ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		d.aTurns++
		row := rows[id]
		switch {
		case row.Status != "completed":
			d.outcomes[row.Status]++
		case row.Finished != nil && row.Finished.Before(dr.exitAt):
			d.aCompleted++
			d.outcomes["completed before the replica exited"]++
		default:
			d.aCompleted++
			d.outcomes["completed elsewhere"]++
		}
	}
	return nil
}

// report adds the drain scenario's criteria and figures to the report.
func (d *drainRun) report() {
	sc := "drain" + d.s.variant
	cfg, rp := d.s.cfg, d.s.report
	rp.check(sc, "longest follower stall after SIGTERM", d.worst <= time.Second, ms(d.worst), "≤ 1000 ms", d.worstWhere)
	rp.check(sc, "turns of the draining replica that finished (there or elsewhere)", d.aCompleted == d.aTurns,
		fmt.Sprintf("%d of %d", d.aCompleted, d.aTurns), fmt.Sprintf("%d of %d", d.aTurns, d.aTurns), countsDetail(d.outcomes))
	rmax, never := bench.Summarize(d.readyz).Max, ""
	if d.readyzNever > 0 {
		never = fmt.Sprintf("%d drains where it answered 200 until the end", d.readyzNever)
	}
	rp.check(sc, "time from SIGTERM to /readyz not answering 200, max", d.readyzNever == 0 && rmax <= time.Second, ms(rmax), "≤ 1000 ms", never)
	rp.atMost(sc, "new event streams opened by the draining replica", d.accepted, 0, "")
	cmax := bench.Summarize(d.cancels).Max
	rp.check(sc, "time to cancel a turn of the draining replica, max", cmax <= time.Second, ms(cmax), "≤ 1000 ms", "")
	rp.figure(sc, "drains / followers / events delivered after SIGTERM", "%d / %d / %d", cfg.DrainRounds, d.followersN, d.eventsAfter)
	emax := bench.Summarize(d.exits).Max
	rp.check(sc, "time from SIGTERM to the replica's exit, max", emax <= cfg.DrainGrace+time.Second, ms(emax),
		"≤ grace + 1 s ("+ms(cfg.DrainGrace+time.Second)+")", "")
}

// underWay reports whether every follower has seen its turn well under
// way or ended.
func (dr *drainRound) underWay() bool {
	for _, df := range dr.dfs {
		if !inProgress(df.follower) && !df.isDone() {
			return false
		}
	}
	return true
}

// allDone reports whether every follower has its turn's terminal event.
func (dr *drainRound) allDone() bool {
	for _, df := range dr.dfs {
		if !df.isDone() {
			return false
		}
	}
	return true
}

// cancelID is the turn of the draining replica that the round cancels.
func (dr *drainRound) cancelID() string { return dr.onA[len(dr.onA)-1] }

// cancelTime is the time from the cancel to the first of its followers'
// terminal events, or to the end of the round when none came.
func (dr *drainRound) cancelTime() time.Duration {
	cancelled := time.Duration(-1)
	for _, f := range dr.turnFollowers[dr.cancelID()] {
		f.mu.Lock()
		if f.done && (cancelled < 0 || f.doneAt.Sub(dr.cancelAt) < cancelled) {
			cancelled = f.doneAt.Sub(dr.cancelAt)
		}
		f.mu.Unlock()
	}
	if cancelled < 0 {
		cancelled = dr.endAt.Sub(dr.cancelAt)
	}
	return cancelled
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
