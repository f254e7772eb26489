package runner

import (
	"errors"
	"fmt"
	"testing"
)

func (p phase) String() string {
	return [...]string{"queued", "running", "stopping", "failing", "ending", "handingOver", "released", "ended"}[p]
}

var allPhases = []phase{phaseQueued, phaseRunning, phaseStopping, phaseFailing, phaseEnding, phaseHandingOver, phaseReleased, phaseEnded}

// TestPhaseTable drives job.to from every phase to every phase: the steps
// of a job's life listed here are taken, every other is refused and leaves
// the job's life as it was.
func TestPhaseTable(t *testing.T) {
	allowed := map[[2]phase]bool{
		{phaseQueued, phaseRunning}:       true, // got a slot
		{phaseQueued, phaseStopping}:      true, // cancelled, shut down or its lease lost while queued
		{phaseQueued, phaseReleased}:      true, // drain: given back while queued
		{phaseQueued, phaseEnded}:         true, // cannot be written any more
		{phaseRunning, phaseStopping}:     true, // cancelled, shut down, its lease lost, or drained
		{phaseRunning, phaseFailing}:      true, // too many events wait for the database
		{phaseRunning, phaseEnding}:       true, // the agent returned
		{phaseRunning, phaseEnded}:        true, // a commit failed
		{phaseStopping, phaseEnding}:      true, // cancelled: the end is written
		{phaseStopping, phaseHandingOver}: true, // drain: the answer moves on
		{phaseStopping, phaseEnded}:       true, // its lease lost, or a commit failed
		{phaseFailing, phaseStopping}:     true, // its user cancels it, or a drain hands it over
		{phaseFailing, phaseEnded}:        true, // the agent returned: nothing can be written
		{phaseEnding, phaseEnded}:         true, // the end committed
		{phaseHandingOver, phaseEnded}:    true, // the hand-over committed
	}
	why := errors.New("why")
	taken := 0
	for _, from := range allPhases {
		for _, to := range allPhases {
			t.Run(fmt.Sprintf("%v→%v", from, to), func(t *testing.T) {
				j := &job{life: life{phase: from, why: why}, done: make(chan struct{})}
				ok := j.to(life{phase: to})
				if want := allowed[[2]phase{from, to}]; ok != want {
					t.Fatalf("to(%v) from %v = %v, want %v", to, from, ok, want)
				}
				switch {
				case ok && (j.life.phase != to || j.life.why != nil):
					t.Fatalf("moved to %v (why %v), want %v", j.life.phase, j.life.why, to)
				case !ok && (j.life.phase != from || j.life.why != why):
					t.Fatalf("a refused step changed the job's life to %v (why %v)", j.life.phase, j.life.why)
				}
				if closed := j.ended(); closed != (ok && to == phaseEnded) {
					t.Fatalf("done closed: %v after %v→%v (moved: %v)", closed, from, to, ok)
				}
				if ok {
					taken++
				}
			})
		}
	}
	if taken != len(allowed) {
		t.Fatalf("%d steps taken, %d allowed", taken, len(allowed))
	}
	// Ended and released are the ends of a job's life: nothing follows them.
	for _, last := range []phase{phaseEnded, phaseReleased} {
		if len(next[last]) != 0 {
			t.Errorf("%v may move on to %v", last, next[last])
		}
	}
}

// TestStopping checks what a stop does in every phase: queued and running
// jobs stop for any cause, which their life then carries; the first cause
// wins; a failing job stops only for a cause whose write may still go out;
// and every stop it proposes is one the phase table allows.
func TestStopping(t *testing.T) {
	failure := errors.New("the answer could not be saved")
	for _, from := range allPhases {
		for _, cause := range []error{errCancelled, errShutdown, errLeaseLost, errHandedOver} {
			t.Run(fmt.Sprintf("%v/%v", from, cause), func(t *testing.T) {
				j := &job{life: life{phase: from, why: failure}, done: make(chan struct{}), cancelFn: func(error) {}}
				l, ok := j.life.stopping(cause)
				want := from == phaseQueued || from == phaseRunning ||
					from == phaseFailing && (cause == errCancelled || cause == errHandedOver)
				if ok != want {
					t.Fatalf("stopping(%v) from %v = %v, want %v", cause, from, ok, want)
				}
				if ok && !j.may(l.phase) {
					t.Fatalf("stopping(%v) from %v proposes %v, which the table refuses", cause, from, l.phase)
				}
				j.stop(cause)
				switch {
				case ok && (j.life.phase != phaseStopping || j.life.why != cause):
					t.Fatalf("stop(%v) from %v left %v (why %v)", cause, from, j.life.phase, j.life.why)
				case !ok && (j.life.phase != from || j.life.why != failure):
					t.Fatalf("a refused stop changed %v to %v (why %v)", from, j.life.phase, j.life.why)
				}
				// The first cause wins.
				j.stop(errShutdown)
				if ok && j.life.why != cause {
					t.Fatalf("a second stop replaced the cause %v with %v", cause, j.life.why)
				}
			})
		}
	}
}

// TestEmits checks which phases take the agent's events, and that a
// failing or abandoned job answers with why it fails.
func TestEmits(t *testing.T) {
	why := errors.New("why")
	for _, p := range allPhases {
		err := life{phase: p, why: why}.emits()
		takes := p == phaseQueued || p == phaseRunning || p == phaseStopping
		if (err == nil) != takes {
			t.Errorf("%v: emits() = %v, want taking events: %v", p, err, takes)
		}
		if (p == phaseFailing || p == phaseEnded) && err != why {
			t.Errorf("%v: emits() = %v, want %v", p, err, why)
		}
	}
}
