package runner

import (
	"context"
	"strings"
	"time"

	"github.com/toolmark/toolmark/store"
)

// A replica looks at the database (store.TakeCensus, one statement) to
// count the other replicas, to learn whether turns run elsewhere whose
// replica may die, and to find the turns left behind by a replica that
// did: every SweepInterval while any turn is active, and every
// idleCheckEvery while none is (an idle replica costs the database next to
// nothing). A notification of another replica's events brings the next
// look forward, and a sweep runs only when the look found a turn to take
// over.
//
// Without a session (store.DB.Sessions: the database URL is pooled and no
// direct URL was given) a replica has no liveness lock and hears no
// notification. It renews a replica lease with each look instead, takes
// over a dead replica's turns once its replica lease expired, and polls
// (store.DB.Poll) the turns its followers follow and the cancel requests
// of its own turns at each look while any is active.

// idleCheckEvery is how often an idle replica with a session looks at the
// database. The turns that start elsewhere announce themselves meanwhile.
const idleCheckEvery = 5 * time.Second

// checkEvery is how long to wait before the next look: SweepInterval
// while turns are active; otherwise idleCheckEvery, or, without a
// session, a fifth of the lease time (the replica lease renewed before it
// runs out, see replicaLeaseTTL).
func (r *Runner) checkEvery(busy bool) time.Duration {
	switch {
	case busy:
		return r.cfg.SweepInterval
	case !r.cfg.Store.Sessions():
		return min(idleCheckEvery, r.cfg.LeaseTTL/5)
	}
	return idleCheckEvery
}

// replicaLeaseTTL is the time a replica without a session is taken for
// alive after its last look: a third of the lease time, renewed at every
// look (a fifth of the lease time apart at most), so that the turns of a
// replica that died are taken over a third of the lease time after.
func (r *Runner) replicaLeaseTTL() time.Duration { return r.cfg.LeaseTTL / 3 }

// check looks at the database once, turns the commits' notifications on
// while another replica is alive (and off while this one is alone: nobody
// else follows its turns, and its own followers are fed from memory),
// sweeps when a turn was left behind, and reports whether turns are active.
//
// A replica that starts takes its liveness lock, then says so on
// ChannelReplicas (store.Join), and the others turn their notifications on
// when they hear it. check and notified run on the loop's goroutine one
// after the other, so a count made before a new replica's lock was taken
// cannot undo the join heard after it; a join missed while the listening
// connection was down is made up by the next count.
func (r *Runner) check(ctx context.Context) (busy bool) {
	var ttl time.Duration
	if !r.cfg.Store.Sessions() {
		ttl = r.replicaLeaseTTL()
	}
	byLiveness := r.cfg.Store.LivenessHeldFor() >= LivenessTrustAfter
	c, err := r.cfg.Store.TakeCensus(ctx, time.Now(), r.cfg.Owner, byLiveness, r.running(), ttl)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("looking at the database", "err", err)
		}
		r.cfg.Store.SetAnnounce(true)
		return true
	}
	r.cfg.Store.SetAnnounce(c.Others > 0)
	if c.Orphans {
		if _, err := r.sweep(ctx); err != nil && ctx.Err() == nil {
			r.log.Error("sweeping turns of stopped servers", "err", err)
		}
	}
	busy = c.Active > 0 || c.Orphans
	if !r.cfg.Store.Sessions() {
		if r.poll(ctx) {
			busy = true // until the followers here have the ends of their turns
		}
		if c.Active > 0 || r.seenTurns != nil {
			r.pollWatched(ctx)
		}
	}
	return busy
}

// poll stands in for the notifications a replica without a session does
// not hear: the new events of the turns its followers follow, and the
// cancel requests of the turns it runs. It reports whether there was
// anything to poll.
func (r *Runner) poll(ctx context.Context) bool {
	ids := r.hub.Followed()
	r.mu.Lock()
	for id := range r.jobs {
		ids = append(ids, id)
	}
	r.mu.Unlock()
	if len(ids) == 0 {
		return false
	}
	got, err := r.cfg.Store.Poll(ctx, ids)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("polling turns", "err", err)
		}
		return true
	}
	for id, p := range got {
		r.hub.Notify(id, p.LastSeq)
		if p.Cancel {
			r.cancelLocal(id)
		}
	}
	return true
}

// remoteNote reports whether a notification is about another replica's
// turns: the next look at the database is brought forward.
func (r *Runner) remoteNote(n store.Notification) bool {
	if n.Channel != store.ChannelEvents {
		return n.Channel == store.ChannelReplicas && n.Payload != r.cfg.Owner
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, item := range strings.Split(n.Payload, ",") {
		if id, _, ok := parseEventsPayload(item); ok && r.jobs[id] == nil {
			return true
		}
	}
	return false
}
