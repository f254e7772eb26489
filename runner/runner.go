// Package runner runs turns as background jobs: it queues them behind a
// bounded number of slots, holds and renews each turn's lease, applies every
// event to the turn's ToolCall document, persists events in batches before
// anyone sees them, saves the message content at every tool status change,
// and finalises turns that were cancelled, failed, or left behind by a
// crashed server.
package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/metrics"
	"github.com/toolmark/toolmark/store"
)

// Event is what an agent emits: a type and its payload (one of the
// toolmark.*Data structs).
type Event struct {
	Type toolmark.EventType
	Data any
}

// EmitFunc receives the agent's events in order.
type EmitFunc func(ctx context.Context, e Event) error

// Job is a newly created turn handed to Submit.
type Job struct {
	Turn     toolmark.Turn
	OwnerID  string
	UserText string
}

// Input is everything an agent needs to answer one turn.
type Input struct {
	Turn     toolmark.Turn
	UserText string
	Summary  string              // compacted history of the oldest turns
	History  []store.HistoryTurn // earlier completed turns, oldest first
}

// RunFunc answers one turn, emitting its events. It must return promptly
// once ctx is done, with every tool call it started at a final status.
type RunFunc func(ctx context.Context, in Input, emit EmitFunc) error

// AfterFunc runs after a turn completed (history compaction, for example).
// Its errors are logged, never shown to the user.
type AfterFunc func(ctx context.Context, t toolmark.Turn) error

// Config configures a Runner. Zero values take the defaults in brackets.
type Config struct {
	Store   *store.DB
	Run     RunFunc
	After   AfterFunc // optional
	Hub     *Hub      // [NewHub()]
	Owner   string    // this replica's lease owner name [random]
	Logger  *slog.Logger
	Metrics *metrics.Metrics // optional

	MaxTurns      int           // turns running at once [4]
	LeaseTTL      time.Duration // [15s]; renewed every LeaseTTL/3
	SweepInterval time.Duration // how often expired leases are looked for [LeaseTTL/2]
	BatchInterval time.Duration // the longest an event waits to be persisted [20ms]
	BatchSize     int           // events that force a batch out at once [64]
	SaveInterval  time.Duration // the longest content waits to be saved [2s]
	Retention     time.Duration // events of turns finished longer ago are pruned; 0 keeps them
	ModelName     string        // reported in turn_started
}

// Runner runs turns. Create one with New, then call Start.
type Runner struct {
	cfg  Config
	log  *slog.Logger
	hub  *Hub
	slot chan struct{}

	mu       sync.Mutex
	jobs     map[string]*job // turns of this replica, queued or running
	queued   int
	closing  bool
	wg       sync.WaitGroup
	stopLoop context.CancelFunc
	loopDone chan struct{}
}

// ErrShuttingDown is returned by Submit once Shutdown has begun.
var ErrShuttingDown = toolmark.Errorf(toolmark.EUNAVAILABLE, "the server is shutting down; try again shortly")

// New returns a Runner with the defaults filled in.
func New(cfg Config) *Runner {
	if cfg.Hub == nil {
		cfg.Hub = NewHub()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Owner == "" {
		cfg.Owner = randomOwner()
	}
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = 4
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = 15 * time.Second
	}
	if cfg.SweepInterval <= 0 {
		cfg.SweepInterval = cfg.LeaseTTL / 2
	}
	if cfg.BatchInterval <= 0 {
		cfg.BatchInterval = 20 * time.Millisecond
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 64
	}
	if cfg.SaveInterval <= 0 {
		cfg.SaveInterval = 2 * time.Second
	}
	return &Runner{
		cfg:  cfg,
		log:  cfg.Logger.With("component", "runner", "owner", cfg.Owner),
		hub:  cfg.Hub,
		slot: make(chan struct{}, cfg.MaxTurns),
		jobs: make(map[string]*job),
	}
}

// Hub returns the hub the runner publishes to.
func (r *Runner) Hub() *Hub { return r.hub }

// Owner returns the lease owner name of this replica.
func (r *Runner) Owner() string { return r.cfg.Owner }

// Start sweeps turns left behind by crashed servers, then keeps sweeping,
// renewing leases and listening for other replicas' events and cancel
// requests until Shutdown.
func (r *Runner) Start(ctx context.Context) error {
	if _, err := r.sweep(ctx); err != nil {
		return fmt.Errorf("sweeping expired turns: %w", err)
	}
	notes, err := r.cfg.Store.Listen(ctx, store.ChannelEvents, store.ChannelCancel)
	if err != nil {
		return fmt.Errorf("listening for notifications: %w", err)
	}
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.stopLoop = cancel
	r.loopDone = make(chan struct{})
	go r.loop(loopCtx, notes)
	return nil
}

func (r *Runner) loop(ctx context.Context, notes <-chan store.Notification) {
	defer close(r.loopDone)
	renew := time.NewTicker(r.cfg.LeaseTTL / 3)
	sweep := time.NewTicker(r.cfg.SweepInterval)
	prune := time.NewTicker(time.Minute)
	defer renew.Stop()
	defer sweep.Stop()
	defer prune.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case n, ok := <-notes:
			if !ok {
				notes = nil
				continue
			}
			r.notified(n)
		case <-renew.C:
			r.renewLeases(ctx)
		case <-sweep.C:
			if _, err := r.sweep(ctx); err != nil && ctx.Err() == nil {
				r.log.Error("sweeping expired turns", "err", err)
			}
		case <-prune.C:
			r.hub.Prune(10 * time.Minute)
			if r.cfg.Retention > 0 {
				n, err := r.cfg.Store.PruneEvents(ctx, time.Now().Add(-r.cfg.Retention))
				if err != nil && ctx.Err() == nil {
					r.log.Error("pruning events", "err", err)
				} else if n > 0 {
					r.log.Info("pruned events", "events", n)
				}
			}
		}
	}
}

// notified handles a PostgreSQL notification from any replica.
func (r *Runner) notified(n store.Notification) {
	switch n.Channel {
	case store.ChannelEvents:
		if turnID, seq, ok := parseEventsPayload(n.Payload); ok {
			r.hub.Publish(turnID, seq)
		}
	case store.ChannelCancel:
		r.cancelLocal(n.Payload)
	}
}

func (r *Runner) sweep(ctx context.Context) ([]string, error) {
	ids, err := r.cfg.Store.SweepExpired(ctx, time.Now())
	for _, id := range ids {
		r.log.Warn("finalised a turn left behind by a stopped server", "turn", id)
		r.cfg.Metrics.TurnEnded(string(toolmark.TurnInterrupted))
		if t, err := r.cfg.Store.TurnByID(ctx, id); err == nil {
			r.hub.Publish(id, t.LastSeq)
		}
	}
	return ids, err
}

func (r *Runner) renewLeases(ctx context.Context) {
	r.mu.Lock()
	jobs := make([]*job, 0, len(r.jobs))
	for _, j := range r.jobs {
		jobs = append(jobs, j)
	}
	r.mu.Unlock()
	for _, j := range jobs {
		err := r.cfg.Store.RenewLease(ctx, j.turn.ID, r.cfg.Owner, r.cfg.LeaseTTL)
		if err != nil && ctx.Err() == nil {
			// Another replica finalised the turn: stop working on it.
			r.log.Error("lost the lease of a turn; stopping it", "turn", j.turn.ID, "err", err)
			j.cancel(errLeaseLost)
			continue
		}
		// A cancel request whose notification was missed still lands here.
		if yes, err := r.cfg.Store.CancelRequested(ctx, j.turn.ID); err == nil && yes {
			j.cancel(errCancelled)
		}
	}
}

var (
	errCancelled = errors.New("cancelled by the user")
	errShutdown  = errors.New("the server shut down before the turn finished")
	errLeaseLost = errors.New("the turn's lease was lost")
)

// Submit takes the lease of a newly created turn, logs turn_queued and
// queues the turn. It returns once the turn is queued, not when it ends.
func (r *Runner) Submit(ctx context.Context, sj Job) error {
	t := sj.Turn
	r.mu.Lock()
	if r.closing {
		r.mu.Unlock()
		return ErrShuttingDown
	}
	if _, dup := r.jobs[t.ID]; dup {
		r.mu.Unlock()
		return nil
	}
	j := newJob(r, sj)
	r.jobs[t.ID] = j
	r.queued++
	position := r.queued - (cap(r.slot) - len(r.slot))
	if position < 0 {
		position = 0
	}
	r.wg.Add(1)
	r.mu.Unlock()
	r.cfg.Metrics.QueueChanged(1)

	if err := r.cfg.Store.AcquireLease(ctx, t.ID, r.cfg.Owner, r.cfg.LeaseTTL); err != nil {
		r.forget(j, true)
		return fmt.Errorf("taking the lease of turn %s: %w", t.ID, err)
	}
	if err := j.b.emitNow(ctx, toolmark.EventTurnQueued, toolmark.TurnQueuedData{Position: position}); err != nil {
		r.forget(j, true)
		return err
	}
	go j.run()
	return nil
}

func (r *Runner) forget(j *job, queued bool) {
	r.mu.Lock()
	delete(r.jobs, j.turn.ID)
	if queued {
		r.queued--
	}
	r.mu.Unlock()
	if queued {
		r.cfg.Metrics.QueueChanged(-1)
	}
	r.wg.Done()
}

// Cancel stops a turn that runs on this replica. Cancel requests for turns
// of other replicas travel through the store (RequestCancel notifies them).
func (r *Runner) Cancel(turnID string) bool { return r.cancelLocal(turnID) }

func (r *Runner) cancelLocal(turnID string) bool {
	r.mu.Lock()
	j := r.jobs[turnID]
	r.mu.Unlock()
	if j == nil {
		return false
	}
	j.cancel(errCancelled)
	return true
}

// Wait blocks until turnID is final, ctx is done, or timeout passes, and
// returns the turn as it then is.
func (r *Runner) Wait(ctx context.Context, turnID string) (toolmark.Turn, error) {
	for {
		t, err := r.cfg.Store.TurnByID(ctx, turnID)
		if err != nil || t.Status.Final() {
			return t, err
		}
		select {
		case <-ctx.Done():
			return t, ctx.Err()
		case <-r.hub.Wait(turnID, t.LastSeq):
		case <-time.After(r.cfg.LeaseTTL):
		}
	}
}

// Shutdown stops accepting turns, lets running and queued turns finish
// until ctx is done, then cancels the rest and waits for them to be
// finalised. No turn of this replica is left running.
func (r *Runner) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	r.closing = true
	r.mu.Unlock()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		r.mu.Lock()
		for _, j := range r.jobs {
			j.cancel(errShutdown)
		}
		r.mu.Unlock()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			r.log.Error("turns still finishing after shutdown; the sweeper will finalise them")
		}
	}
	if r.stopLoop != nil {
		r.stopLoop()
		<-r.loopDone
	}
	return nil
}

// parseEventsPayload reads the "turnID:lastSeq" payload of ChannelEvents.
func parseEventsPayload(p string) (string, int64, bool) {
	i := strings.LastIndexByte(p, ':')
	if i <= 0 {
		return "", 0, false
	}
	seq, err := strconv.ParseInt(p[i+1:], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return p[:i], seq, true
}

// randomOwner names this replica for leases: host name, process id and a
// random suffix, so a restarted process never mistakes an old lease for its
// own.
func randomOwner() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

func marshalData(v any) (json.RawMessage, error) {
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding event data: %w", err)
	}
	return b, nil
}
