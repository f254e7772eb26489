package faults

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// resume runs waves of turns on two replicas, each followed by clients
// that drop their stream after a random 0.1–0.7 s and resume it with
// Last-Event-ID on either replica, until the number of cycles is reached.
// The server must send no event twice and skip none, and what each follower
// ends with must be the turn's log.
func (s *suite) resume(ctx context.Context) error {
	const sc = "resume"
	cfg := s.cfg
	u, reps, err := s.setup(ctx, sc, serve{pace: 40 * time.Millisecond, grace: quickStop}, "resume-a", "resume-b")
	if err != nil {
		return err
	}
	pick := func() string { return reps[s.intn(len(reps))].URL }
	var cycles, dups, gaps, differ, events, turns, errs, unfinished int
	var differEx []string
	for wave := 1; cycles < cfg.ResumeCycles; wave++ {
		var mu sync.Mutex
		var wg sync.WaitGroup
		var fs []*follower
		for i := 0; i < 4; i++ {
			rep := reps[i%len(reps)]
			_, id, err := u.startTurn(ctx, rep.URL, s.prompt())
			if err != nil {
				return err
			}
			turns++
			for j := 0; j < 3; j++ {
				f := &follower{u: u, turnID: id}
				fs = append(fs, f)
				wg.Add(1)
				go func() {
					defer wg.Done()
					deadline := time.Now().Add(2 * time.Minute)
					for !f.isDone() && time.Now().Before(deadline) && ctx.Err() == nil {
						cctx, cut := context.WithTimeout(ctx, s.between(100*time.Millisecond, 700*time.Millisecond))
						st, err := f.connect(cctx, pick())
						mine := cctx.Err() != nil // the cut, not the server
						cut()
						mu.Lock()
						if st != 0 && st != 200 || st == 0 && err != nil && !mine {
							errs++
						}
						if !f.isDone() {
							cycles++
						}
						mu.Unlock()
					}
				}()
			}
		}
		wg.Wait()
		for _, f := range fs {
			f.mu.Lock()
			dups += f.seq.Duplicates
			gaps += f.seq.Gaps
			done := f.done
			f.mu.Unlock()
			if !done {
				unfinished++
			}
			got := f.snapshot()
			events += len(got)
			log, err := u.log(ctx, reps[0].URL, f.turnID, 0, 30*time.Second)
			if err != nil {
				return err
			}
			m, d := compareWithLog(got, log)
			if m+d > 0 || len(got) != len(log) {
				differ++
				differEx = append(differEx, fmt.Sprintf("turn %s: %d of %d events, %d missing from the log, %d different", f.turnID, len(got), len(log), m, d))
			}
		}
		s.progress("resume wave %d: %d cycles so far, %d duplicates, %d gaps", wave, cycles, dups, gaps)
	}
	rp := s.report
	rp.atMost(sc, "duplicate events after a resume", dups, 0, "")
	rp.atMost(sc, "gaps after a resume", gaps, 0, "")
	rp.atMost(sc, "followers whose events differ from the log", differ, 0, examples(differEx))
	rp.atMost(sc, "followers that never got the terminal event", unfinished, 0, "")
	rp.atMost(sc, "resumes refused or failed by the server", errs, 0, "")
	rp.figure(sc, "disconnect/resume cycles / turns / events delivered", "%d / %d / %d", cycles, turns, events)
	return nil
}
