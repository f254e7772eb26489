package runner

import (
	"fmt"
	"testing"
)

func (p phase) String() string {
	return [...]string{"queued", "running", "ending", "handingOver", "released", "ended"}[p]
}

// TestPhaseTable drives job.to from every phase to every phase: the steps
// of a job's life listed here are taken, every other is refused and leaves
// the phase as it was.
func TestPhaseTable(t *testing.T) {
	allowed := map[[2]phase]bool{
		{phaseQueued, phaseRunning}:      true, // got a slot
		{phaseQueued, phaseEnding}:       true, // cancelled while queued
		{phaseQueued, phaseReleased}:     true, // drain: given back while queued
		{phaseQueued, phaseEnded}:        true, // cannot be written any more
		{phaseRunning, phaseEnding}:      true, // the agent returned
		{phaseRunning, phaseHandingOver}: true, // drain: the answer moves on
		{phaseRunning, phaseEnded}:       true,
		{phaseEnding, phaseEnded}:        true, // the end committed
		{phaseHandingOver, phaseEnded}:   true, // the hand-over committed
	}
	all := []phase{phaseQueued, phaseRunning, phaseEnding, phaseHandingOver, phaseReleased, phaseEnded}
	taken := 0
	for _, from := range all {
		for _, to := range all {
			t.Run(fmt.Sprintf("%v→%v", from, to), func(t *testing.T) {
				j := &job{phase: from}
				ok := j.to(to)
				want := allowed[[2]phase{from, to}]
				if ok != want {
					t.Fatalf("to(%v) from %v = %v, want %v", to, from, ok, want)
				}
				switch {
				case ok && j.phase != to:
					t.Fatalf("moved to %v, want %v", j.phase, to)
				case !ok && j.phase != from:
					t.Fatalf("a refused step moved the job to %v", j.phase)
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
