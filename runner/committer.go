package runner

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/fanout"
	"github.com/toolmark/toolmark/store"
)

// committer persists the events of every turn of this replica in group
// commits, without a timer: at most one transaction is in flight, and the
// next starts as soon as it ends, with everything all turns emitted
// meanwhile. Idle, an event waits about one commit; under load a
// transaction carries the events of hundreds of turns in a few statements,
// the batches growing by themselves with the time a commit takes. Once a
// transaction commits, its events go to the hub (persist, then publish).
type committer struct {
	r    *Runner
	mu   sync.Mutex
	list []*job
	// inflight are the jobs of the transaction in flight.
	inflight []*job
	wake     chan struct{}
	quit     chan struct{}
	exited   chan struct{}
}

func newCommitter(r *Runner) *committer {
	return &committer{r: r, wake: make(chan struct{}, 1), quit: make(chan struct{}), exited: make(chan struct{})}
}

// mark queues j for the next group commit.
func (c *committer) mark(j *job) {
	j.mu.Lock()
	first := j.markLocked()
	j.mu.Unlock()
	if first {
		c.enqueue(j)
	}
}

// enqueue adds j, which markLocked just marked, to the next group commit.
func (c *committer) enqueue(j *job) {
	c.mu.Lock()
	c.list = append(c.list, j)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// pending adds to ids the turns whose writes the committer holds, queued
// or in flight.
func (c *committer) pending(ids []string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, js := range [][]*job{c.list, c.inflight} {
		for _, j := range js {
			ids = append(ids, j.turn.ID)
		}
	}
	return ids
}

// stop ends the loop once what is queued is committed.
func (c *committer) stop() {
	close(c.quit)
	<-c.exited
}

func (c *committer) run(ctx context.Context) {
	defer close(c.exited)
	for {
		select {
		case <-c.wake:
		case <-c.quit:
			c.flush(context.WithoutCancel(ctx))
			return
		}
		c.flush(context.WithoutCancel(ctx))
	}
}

// flush commits what every queued turn has pending, retrying a failed
// transaction with backoff for up to RetryFor.
func (c *committer) flush(ctx context.Context) {
	c.mu.Lock()
	jobs := c.list
	c.list, c.inflight = nil, jobs
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.inflight = nil
		c.mu.Unlock()
	}()
	if len(jobs) == 0 {
		return
	}
	writes := make([]store.TurnWrite, 0, len(jobs))
	frames := make([][]fanout.Frame, 0, len(jobs))
	owners := make([]*job, 0, len(jobs))
	n := 0
	for _, j := range jobs {
		w, fs, ok := j.take()
		if !ok {
			continue
		}
		writes, frames, owners = append(writes, w), append(frames, fs), append(owners, j)
		n += len(fs)
	}
	if len(writes) == 0 {
		return
	}
	start := time.Now()
	backoff := 50 * time.Millisecond
	for {
		err := c.r.cfg.Store.Commit(ctx, c.r.cfg.Owner, writes)
		var refused *store.RefusedError
		if err == nil || errors.As(err, &refused) {
			c.r.cfg.Metrics.BatchPersisted(n, time.Since(start))
			c.r.log.Debug("group commit", "turns", len(writes), "events", n, "took", time.Since(start))
			// One publish for the commit's turns (those the store took): the
			// hub's writer then writes its parked followers once for all.
			var refusedTurns map[string]error
			if refused != nil {
				refusedTurns = refused.Turns
			}
			ids, published := make([]string, 0, len(writes)), frames[:0]
			for i, w := range writes {
				if why, ok := refusedTurns[w.TurnID]; ok {
					j := owners[i]
					if errors.Is(why, store.ErrLeaseLost) {
						j.log.Error("the store refused the turn's events: its lease is lost", "err", why)
						j.fail(errLeaseLost)
					} else {
						j.log.Error("the store refused the turn's events", "err", why)
						j.fail(why)
					}
					owners[i] = nil
					continue
				}
				ids, published = append(ids, w.TurnID), append(published, frames[i])
			}
			c.r.hub.PublishAll(ids, published)
			for i, w := range writes {
				if owners[i] != nil {
					owners[i].committedWrite(w)
				}
			}
			return
		}
		if !store.Transient(err) || time.Since(start) > c.r.cfg.RetryFor {
			c.r.log.Error("persisting events failed; the turns of the batch stop", "turns", len(writes), "err", err)
			for _, j := range owners {
				j.fail(toolmark.Errorf(toolmark.EUNAVAILABLE, "the answer could not be saved"))
			}
			return
		}
		c.r.log.Warn("persisting events failed; retrying", "turns", len(writes), "backoff", backoff, "err", err)
		time.Sleep(backoff)
		backoff = min(backoff*2, 2*time.Second)
	}
}
