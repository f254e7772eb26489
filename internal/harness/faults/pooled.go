package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/pgbouncer"
	"github.com/toolmark/toolmark/runner"
)

// The pooled scenario runs the takeover (with three replicas) and drain
// scenarios again with the replicas reaching PostgreSQL through PgBouncer
// in transaction mode: first with DATABASE_DIRECT_URL set to the direct
// URL (LISTEN and liveness locks on it), then without (liveness by replica
// leases, polling). Their criteria are reported under the scenario's name
// and the way the replicas were connected.

// Pooler ways of connecting the replicas (cluster.usePooler).
const (
	poolerWithDirect = "direct URL"
	poolerOnly       = "no direct URL"
)

// pooled runs takeover and drain through PgBouncer, with a direct URL and
// without.
func (s *suite) pooled(ctx context.Context) error {
	defer func() { s.variant = "" }()
	for _, way := range []string{poolerWithDirect, poolerOnly} {
		if err := s.cl.usePooler(ctx, way); err != nil {
			return err
		}
		s.variant = " (pgbouncer, " + way + ")"
		s.progress("pooled: through PgBouncer 1.18 in transaction mode, %s", way)
		err := s.takeover(ctx)
		s.cl.stopAll()
		if err == nil {
			err = s.drain(ctx)
			s.cl.stopAll()
		}
		if err != nil {
			return err
		}
	}
	return s.cl.usePooler(ctx, "")
}

// usePooler makes the replicas started from now on reach the database
// through PgBouncer, with a direct URL (poolerWithDirect) or without
// (poolerOnly), or directly (""), which also stops PgBouncer.
func (c *cluster) usePooler(ctx context.Context, way string) error {
	if way == "" {
		if c.pooler != nil {
			c.pooler.Stop()
			c.pooler = nil
		}
		return nil
	}
	if c.pooler == nil {
		pb, err := pgbouncer.Start(ctx, pgbouncer.Config{Server: c.dbURL, PoolSize: 40})
		if err != nil {
			return fmt.Errorf("faults: starting PgBouncer: %w", err)
		}
		u, err := pb.Pooled(c.dbURL)
		if err != nil {
			pb.Stop()
			return err
		}
		c.pooler, c.poolerURL = pb, u
	}
	c.withDirect = way == poolerWithDirect
	return nil
}

// takeoverBounds are the takeover scenario's bounds on the time from the
// kill to the turn going on elsewhere (p50, max): with liveness locks (a
// session), 1 s and 2 s; without (PgBouncer and no direct URL), the lease
// time of the replicas, within which the issue of a pooled deployment
// promises it.
func (s *suite) takeoverBounds() (p50, max time.Duration) {
	if s.cl.pooler != nil && !s.cl.withDirect {
		return runner.DefaultLeaseTTL, runner.DefaultLeaseTTL
	}
	return time.Second, 2 * time.Second
}

// logFaults counts, among followers that followed their turn from its
// start, the turns whose events do not run from seq 1 without a gap or a
// duplicate to exactly one terminal event: a turn run twice, or left
// without an end.
func logFaults(fs []*follower) (bad int, ex []string) {
	for _, f := range fs {
		frames := f.snapshot()
		if len(frames) == 0 {
			continue
		}
		seq := frames[0].Seq - 1
		terminal, ok := 0, true
		for _, fr := range frames {
			if fr.Type == toolmark.EventSnapshot {
				ok = false // a snapshot stands for what came before: nothing to check
				break
			}
			if fr.Seq != seq+1 {
				ex = append(ex, fmt.Sprintf("%s: seq %d after %d", f.turnID, fr.Seq, seq))
				terminal = -1
				break
			}
			seq = fr.Seq
			if fr.Type.Terminal() {
				terminal++
			}
		}
		if ok && terminal != 1 {
			bad++
			if terminal == 0 {
				ex = append(ex, f.turnID+": no terminal event")
			}
		}
	}
	return bad, ex
}
