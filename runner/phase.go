package runner

import (
	"errors"
	"slices"

	"github.com/toolmark/toolmark/store"
)

// phase is where a job is in its life on this replica. It moves only
// forward, through to (the one transition function), along next:
//
//	queued → running → ending → ended          (the turn's end committed)
//	queued → stopping → ending → ended        (cancelled, or shut down, while queued)
//	running → stopping → ending → ended       (cancelled, or shut down)
//	running → stopping → handingOver → ended  (drain: the answer moves on)
//	running → failing → ended                 (the turn's events cannot be saved)
//	queued → released                         (drain: given back while queued)
//	any → ended                               (the turn cannot be written any more)
type phase int

const (
	phaseQueued      phase = iota // waiting for a slot
	phaseRunning                  // the agent runs
	phaseStopping                 // the agent was asked to stop; life.why says why
	phaseFailing                  // emitting fails from now on; life.why says why
	phaseEnding                   // the terminal event is emitted; life.finish is written with it
	phaseHandingOver              // the last write releases the lease for another replica
	phaseReleased                 // given back to the other replicas while queued
	phaseEnded                    // the end (or hand-over) is committed (life.why nil), or abandoned
)

// next lists the phases each phase may move to.
var next = map[phase][]phase{
	phaseQueued:   {phaseRunning, phaseStopping, phaseReleased, phaseEnded},
	phaseRunning:  {phaseStopping, phaseFailing, phaseEnding, phaseEnded},
	phaseStopping: {phaseEnding, phaseHandingOver, phaseEnded},
	// A failing turn still writes its end when its user cancels it, or
	// hands it over on a drain: the write may yet get through.
	phaseFailing:     {phaseStopping, phaseEnded},
	phaseEnding:      {phaseEnded},
	phaseHandingOver: {phaseEnded},
}

// life is a job's state on this replica: its phase and what the phase
// carries. It is the one record of where the job is; it changes only
// through job.to.
type life struct {
	phase phase
	// why is, in phaseStopping, why the agent was stopped (errCancelled,
	// errShutdown, errLeaseLost, errHandedOver); in phaseFailing, why
	// emitting fails; in phaseEnded, why the job ended without its end
	// written (nil: it was written).
	why error
	// finish is, in phaseEnding, the turn's end, written with the
	// terminal event.
	finish *store.Finish
}

// to moves j to the life l and reports whether the phase table allows
// it; j.mu is held. Reaching phaseEnded closes j.done.
func (j *job) to(l life) bool {
	if !j.may(l.phase) {
		return false
	}
	j.life = l
	if l.phase == phaseEnded && j.done != nil {
		close(j.done)
	}
	return true
}

// may reports whether j may move to phase p; j.mu is held.
func (j *job) may(p phase) bool { return slices.Contains(next[j.life.phase], p) }

// stopping returns the life of a job asked to stop for cause from its
// life now, and whether it moves: the first cause wins; a failing job
// moves on only for a cause whose write may still go out (its user's
// cancel, a hand-over), for any other ends it as its failure does.
func (l life) stopping(cause error) (life, bool) {
	switch l.phase {
	case phaseQueued, phaseRunning:
		return life{phase: phaseStopping, why: cause}, true
	case phaseFailing:
		if errors.Is(cause, errCancelled) || errors.Is(cause, errHandedOver) {
			return life{phase: phaseStopping, why: cause}, true
		}
	}
	return l, false
}

// emits reports whether a job in this life takes the agent's events, and
// the error an emit gets when it does not.
func (l life) emits() error {
	switch l.phase {
	case phaseQueued, phaseRunning, phaseStopping:
		return nil
	case phaseFailing:
		return l.why
	case phaseEnded:
		if l.why != nil {
			return l.why
		}
	}
	return errors.New("the turn has ended")
}
