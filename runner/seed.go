package runner

import (
	"context"
	"errors"

	"github.com/toolmark/toolmark/turnstate"
)

// A rendering follower that starts late on this replica, or falls behind,
// has its live view seeded from the job's state (fanout.StateSource), not
// from the log replayed. The state handed out must be of a committed seq
// (persist, then publish): the job's state runs ahead of its log by the
// events pending or in flight, so a copy is made when none is — at once
// when the log has caught up with the state, else at the next take, whose
// commit then hands it out.

// errNoSeed is CommittedState's error for a job that ended first.
var errNoSeed = errors.New("the turn's job ended")

// seeding is what the job holds for the followers waiting for its state.
type seeding struct {
	waiting []chan *turnstate.State
	copy    *turnstate.State // made at a take, handed out once committed
	at      int64            // its seq
}

// CommittedState returns a copy of the turn's state as of its newest
// committed event, waiting for a commit when events are pending or in
// flight (fanout.StateSource).
func (j *job) CommittedState(ctx context.Context) (*turnstate.State, error) {
	j.mu.Lock()
	if st := j.caughtUpLocked(); st != nil {
		j.mu.Unlock()
		return st, nil
	}
	ch := make(chan *turnstate.State, 1)
	j.seeds.waiting = append(j.seeds.waiting, ch)
	first := j.markLocked() // nothing pending: the take hands out what is in flight
	j.mu.Unlock()
	if first {
		j.r.c.enqueue(j)
	}
	select {
	case st := <-ch:
		return st, nil
	case <-j.done:
		return nil, errNoSeed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// caughtUpLocked returns a copy of the state when the log holds all of it
// (nothing pending or in flight); j.mu is held.
func (j *job) caughtUpLocked() *turnstate.State {
	if len(j.pending) > 0 || j.nextSeq-1 != j.lastCommit {
		return nil
	}
	return j.state.CloneAt(j.lastCommit)
}

// seedAtTakeLocked copies the state for the waiting followers as a take
// leaves it, at the seq of the last event taken; j.mu is held.
func (j *job) seedAtTakeLocked() {
	if len(j.seeds.waiting) > 0 && j.seeds.copy == nil {
		j.seeds.copy, j.seeds.at = j.state.CloneAt(j.nextSeq-1), j.nextSeq-1
	}
}

// seedCommittedLocked hands the waiting followers a state the log now
// holds: the copy of a take once committed, or the state itself when the
// log caught up with it; j.mu is held.
func (j *job) seedCommittedLocked() {
	if len(j.seeds.waiting) == 0 {
		return
	}
	st := j.seeds.copy
	if st == nil || j.lastCommit < j.seeds.at {
		st = j.caughtUpLocked()
	}
	if st == nil {
		return
	}
	for i, ch := range j.seeds.waiting {
		if i > 0 {
			st = st.CloneAt(st.Seq()) // each view owns its state
		}
		ch <- st
	}
	j.seeds = seeding{}
}
