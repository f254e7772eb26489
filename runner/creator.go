package runner

import (
	"context"
	"log/slog"
	"time"

	"github.com/toolmark/toolmark/store"
)

// creator creates turns in groups: the requests that arrive while one
// statement runs go together in the next (store.CreateTurns), so a burst of
// new turns costs a few statements instead of one transaction each, and
// none waits for more than the statement before it.
type creator struct {
	db   *store.DB
	log  *slog.Logger
	reqs chan *createReq
	busy chan struct{} // held by the goroutine that writes a group
}

type createReq struct {
	nt    store.NewTurn
	reply chan store.CreatedTurn
}

func newCreator(db *store.DB, log *slog.Logger) *creator {
	return &creator{db: db, log: log, reqs: make(chan *createReq, 4096), busy: make(chan struct{}, 1)}
}

// create creates nt, together with whatever other requests are waiting.
func (c *creator) create(ctx context.Context, nt store.NewTurn) (store.CreatedTurn, error) {
	req := &createReq{nt: nt, reply: make(chan store.CreatedTurn, 1)}
	select {
	case c.reqs <- req:
	case <-ctx.Done():
		return store.CreatedTurn{}, ctx.Err()
	}
	for {
		select {
		case res := <-req.reply:
			return res, nil
		case c.busy <- struct{}{}:
			// No one is writing: this request's goroutine writes the
			// group waiting now (its own request among them, or already
			// answered by the previous writer).
			c.writeGroup()
			<-c.busy
		}
	}
}

// writeGroup writes every request waiting in the queue, in groups of at
// most 512.
func (c *creator) writeGroup() {
	for {
		var group []*createReq
	collect:
		for len(group) < 512 {
			select {
			case req := <-c.reqs:
				group = append(group, req)
			default:
				break collect
			}
		}
		if len(group) == 0 {
			return
		}
		nts := make([]store.NewTurn, len(group))
		for i, req := range group {
			nts[i] = req.nt
		}
		// The statement goes on when a requester leaves: its turn is
		// created for whoever retries with its idempotency key.
		start := time.Now()
		res := c.db.CreateTurns(context.Background(), nts)
		c.log.Debug("turns created", "turns", len(nts), "took", time.Since(start))
		for i, req := range group {
			req.reply <- res[i]
		}
	}
}
