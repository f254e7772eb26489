package runner

import (
	"context"
	"time"
)

// LivenessTrustAfter is how long a replica holds its own liveness lock
// before it takes another replica's missing lock for its death: longer
// than the others take to reconnect (at most a second apart) once the
// database is back.
const LivenessTrustAfter = 3 * time.Second

// renewEvery renews the leases of the turns this replica runs every third
// of their time to live, until ctx is done.
func (r *Runner) renewEvery(ctx context.Context) {
	t := time.NewTicker(r.cfg.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.renewLeases(ctx)
		}
	}
}

func (r *Runner) renewLeases(ctx context.Context) {
	r.mu.Lock()
	ids := make([]string, 0, len(r.jobs))
	for id := range r.jobs {
		ids = append(ids, id)
	}
	r.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	held, cancel, err := r.cfg.Store.RenewLeases(ctx, r.cfg.Owner, r.cfg.LeaseTTL, ids)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Error("renewing leases", "err", err)
		}
		return
	}
	have := make(map[string]bool, len(held))
	for _, id := range held {
		have[id] = true
	}
	r.mu.Lock()
	var lost []*job
	for _, id := range ids { // not r.jobs: turns created since were not asked about
		if j, ok := r.jobs[id]; ok && !have[id] && !j.ended() {
			lost = append(lost, j)
		}
	}
	r.mu.Unlock()
	for _, j := range lost {
		r.log.Error("lost the lease of a turn; stopping it", "turn", j.turn.ID)
		j.stop(errLeaseLost)
	}
	// A cancel request whose notification was missed still lands here.
	for _, id := range cancel {
		r.cancelLocal(id)
	}
}
