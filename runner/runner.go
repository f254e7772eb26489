// Package runner runs turns as background jobs: it creates each turn with
// its lease, queues it behind a bounded number of slots, applies every event
// the agent emits to the turn's state (package turnstate), commits the
// events of all running turns in one transaction per window (group commit),
// and only then hands them to the turn's followers from memory (persist,
// then publish). It renews leases, takes over the turns of replicas that
// died, and finalises turns that were cancelled or failed.
//
// # Data flow
//
//	agent → emit → turnstate.State.Apply → pending drafts
//	      → committer: marshal once, store.Commit (one transaction for every turn that has events)
//	      → Hub.Publish (frames built once) → followers
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
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/fanout"
	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/store"
	"github.com/toolmark/toolmark/turnstate"
)

// Input is everything an agent needs to answer one turn.
type Input struct {
	Turn     toolmark.Turn
	UserText string
	Summary  string                 // compacted history of the oldest turns
	History  []toolmark.HistoryTurn // earlier completed turns, oldest first
	Resume   *toolmark.Resume       // set when the turn continues an answer begun elsewhere
}

// RunFunc answers one turn, emitting its events. It must return promptly
// once ctx is done, with every tool call it started at a final status.
type RunFunc func(ctx context.Context, in Input, emit toolmark.EmitFunc) error

// AfterFunc runs after a turn completed, with the turn's input and final
// content (history compaction, for example). Its errors are logged, never
// shown to the user.
type AfterFunc func(ctx context.Context, in Input, content string) error

// Config configures a Runner. Zero values take the defaults in brackets.
type Config struct {
	Store   *store.DB
	Run     RunFunc
	After   AfterFunc   // optional
	Hub     *fanout.Hub // [fanout.NewHub reading Store]
	Owner   string      // this replica's lease owner name [random]
	Logger  *slog.Logger
	Metrics Metrics // optional

	MaxTurns      int           // turns running at once [DefaultMaxTurns]; more wait in a queue
	LeaseTTL      time.Duration // [15s]; renewed every LeaseTTL/3
	SweepInterval time.Duration // how often turns of gone replicas are looked for [250ms]
	MaxPending    int           // events a turn may hold while the database is away [100 000]
	RetryFor      time.Duration // how long a failed commit is retried before its turns fail [30s]
	Retention     time.Duration // events of turns finished longer ago are pruned; 0 keeps them
	ModelName     string        // reported in turn_started
}

// DefaultLeaseTTL is a turn's lease time by default: without a session
// (store.DB.Sessions), the time within which a dead replica's turns are
// taken over.
const DefaultLeaseTTL = 15 * time.Second

// DefaultMaxTurns is how many turns run at once by default. A turn mostly
// waits on its model, so hundreds fit one small server.
const DefaultMaxTurns = 512

// Runner runs turns. Create one with New, then call Start.
type Runner struct {
	cfg     Config
	log     *slog.Logger
	hub     *fanout.Hub
	slot    chan struct{}
	c       *committer
	creates *creator

	onTurn    atomic.Pointer[turnWatch] // OnTurnStarted
	seenTurns map[string]string         // pollWatched's last look: active turn by conversation (loop only)

	mu       sync.Mutex
	jobs     map[string]*job // turns of this replica, queued or running
	queued   int
	closing  bool
	wg       sync.WaitGroup
	stopLoop context.CancelFunc
	loopDone chan struct{}
}

// ErrShuttingDown is returned by Create once Shutdown has begun.
var ErrShuttingDown = toolmark.Errorf(toolmark.EUNAVAILABLE, "the server is shutting down; try again shortly")

// New returns a Runner with the defaults filled in.
func New(cfg Config) *Runner {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = noMetrics{}
	}
	if cfg.Hub == nil {
		cfg.Hub = fanout.NewHub(Log(cfg.Store, cfg.Logger))
	}
	if cfg.Owner == "" {
		cfg.Owner = randomOwner()
	}
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = DefaultMaxTurns
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	if cfg.SweepInterval <= 0 {
		cfg.SweepInterval = 250 * time.Millisecond
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = 100_000
	}
	if cfg.RetryFor <= 0 {
		cfg.RetryFor = 30 * time.Second
	}
	r := &Runner{
		cfg:  cfg,
		log:  cfg.Logger.With("component", "runner", "owner", cfg.Owner),
		hub:  cfg.Hub,
		slot: make(chan struct{}, cfg.MaxTurns),
		jobs: make(map[string]*job),
	}
	r.c = newCommitter(r)
	r.creates = newCreator(r.cfg.Store, r.log)
	return r
}

// Hub returns the hub the runner publishes to.
func (r *Runner) Hub() *fanout.Hub { return r.hub }

// Owner returns the lease owner name of this replica.
func (r *Runner) Owner() string { return r.cfg.Owner }

// Start takes this replica's liveness lock and starts listening for other
// replicas' events and cancel requests, finalises turns that stopped
// servers left behind, adopts the queued turns they never ran, and keeps
// doing all that, renewing leases, until Shutdown.
func (r *Runner) Start(ctx context.Context) error {
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var notes <-chan store.Notification
	if r.cfg.Store.Sessions() {
		var err error
		notes, err = r.cfg.Store.ListenAs(loopCtx, r.cfg.Owner, store.ChannelEvents, store.ChannelCancel, store.ChannelReplicas, store.ChannelTurns)
		if err != nil {
			cancel()
			return fmt.Errorf("listening for notifications: %w", err)
		}
	}
	if err := r.cfg.Store.Join(ctx, r.cfg.Owner); err != nil {
		r.log.Warn("announcing this replica", "err", err) // the others count it at their next look
	}
	r.check(ctx)
	if _, err := r.sweep(ctx); err != nil {
		cancel()
		return fmt.Errorf("sweeping turns of stopped servers: %w", err)
	}
	r.stopLoop = cancel
	r.loopDone = make(chan struct{})
	go r.c.run(loopCtx)
	go r.loop(loopCtx, notes)
	return nil
}

// hubLinger is how long the hub keeps the frames of a finished turn that
// nobody follows, and of a remote turn whose followers left; a follower
// that comes later reads the store. Kept for a minute or two, as before,
// the frames of the turns that finished meanwhile made most of the heap (450
// MB at 170 turns a second), and its garbage collections each took a
// processor for 100 to 300 ms.
const hubLinger = 5 * time.Second

func (r *Runner) loop(ctx context.Context, notes <-chan store.Notification) {
	defer close(r.loopDone)
	// Leases are renewed on a goroutine of their own: a sweep waiting for a
	// connection of a busy pool must not hold them up until they run out.
	var renewing sync.WaitGroup
	renewing.Go(func() { r.renewEvery(ctx) })
	defer renewing.Wait()
	check := time.NewTimer(r.checkEvery(true))
	idle := false // the last look found no active turn: a remote note brings the next forward
	prune := time.NewTicker(time.Minute)
	forget := time.NewTicker(hubLinger / 5)
	defer check.Stop()
	defer prune.Stop()
	defer forget.Stop()
	for {
		select {
		case <-ctx.Done():
			if !r.cfg.Store.Sessions() {
				dctx, cancel := context.WithTimeout(context.Background(), time.Second)
				if err := r.cfg.Store.DropReplicaLease(dctx, r.cfg.Owner); err != nil {
					r.log.Warn("dropping the replica lease", "err", err)
				}
				cancel()
			}
			return
		case n, ok := <-notes:
			if !ok {
				notes = nil
				continue
			}
			r.notified(n)
			if idle && r.remoteNote(n) {
				idle = false
				check.Reset(0)
			}
		case <-check.C:
			busy := r.check(ctx)
			idle = !busy
			check.Reset(r.checkEvery(busy))
		case <-forget.C:
			r.hub.Prune(hubLinger)
		case <-prune.C:
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

var (
	errCancelled = errors.New("cancelled by the user")
	errShutdown  = errors.New("the server shut down before the turn finished")
	errLeaseLost = errors.New("the turn's lease was lost")
)

// Create creates a turn in one of the owner's conversations and queues it on
// this replica: one transaction writes the messages, the turn with this
// replica's lease and its turn_queued event. A request repeating an
// Idempotency-Key gets the turn it created before.
func (r *Runner) Create(ctx context.Context, nt store.NewTurn) (toolmark.Turn, error) {
	r.mu.Lock()
	if r.closing {
		r.mu.Unlock()
		return toolmark.Turn{}, ErrShuttingDown
	}
	position := max(r.queued+1-(cap(r.slot)-len(r.slot)), 0)
	r.mu.Unlock()
	data, err := marshalData(toolmark.TurnQueuedData{Position: position})
	if err != nil {
		return toolmark.Turn{}, err
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	nt.LeaseOwner, nt.LeaseTTL = r.cfg.Owner, r.cfg.LeaseTTL
	nt.Queued = &toolmark.Event{Seq: 1, Type: toolmark.EventTurnQueued, Data: data, Time: now}
	res, err := r.creates.create(ctx, nt)
	if err != nil {
		return toolmark.Turn{}, err
	}
	t, created := res.Turn, res.Created
	if res.Err != nil || !created {
		return t, res.Err
	}
	r.enqueue(t, nt.OwnerID, nt.Input.Content, 1, nil, fanout.NewFrame(toolmark.Event{Seq: 1, TurnID: t.ID, MessageID: t.AssistantMessageID,
		Type: toolmark.EventTurnQueued, Time: now, Data: data}, toolmark.TurnQueuedData{Position: position}))
	if err := r.cfg.Store.AnnounceTurn(ctx, r.cfg.Owner, t.ConversationID, t.ID); err != nil {
		r.log.Warn("announcing a turn to the other replicas", "turn", t.ID, "err", err) // their watchers see it when they next open
	}
	return t, nil
}

// enqueue registers a turn whose lease this replica holds and starts its
// job. seq is the seq of the turn's last logged event (0: read from the
// turn); state, when not nil, is the answer so far of a turn to continue;
// committed are frames of the turn committed already, published before the
// job runs.
//
// The job's life opens the turn's entry in the hub (Hub.Open) and its end
// closes it (forget): the runner's jobs and the hub's local turns are one
// registry, kept in step here and nowhere else.
func (r *Runner) enqueue(t toolmark.Turn, ownerID, userText string, seq int64, state *turnstate.State, committed ...fanout.Frame) {
	if seq <= 0 {
		seq = t.LastSeq
	}
	r.mu.Lock()
	if _, dup := r.jobs[t.ID]; dup {
		r.mu.Unlock()
		return
	}
	j := newJob(r, t, ownerID, userText, seq)
	if state != nil {
		j.state, j.resumed = state, true
	}
	for _, f := range committed { // what the log holds already is in the job's state too
		if err := j.state.Apply(toolmark.Draft{Type: f.Event.Type, Data: f.Data, Tag: f.Tag}, f.Event.Time); err != nil {
			j.log.Warn("a committed event does not apply to the turn's state", "seq", f.Event.Seq, "err", err)
		}
	}
	r.jobs[t.ID] = j
	r.queued++
	r.wg.Add(1)
	r.hub.Open(t.ID, j, committed)
	r.mu.Unlock()
	r.cfg.Metrics.QueueChanged(1)
	go j.run()
}

// forget drops a job that is done.
func (r *Runner) forget(j *job) {
	r.mu.Lock()
	delete(r.jobs, j.turn.ID)
	// Whoever ends the turn from now on — this job did, or a sweep will
	// for a job that could not — its followers here learn of it from the
	// store and notifications like those of any turn run elsewhere.
	r.hub.Close(j.turn.ID)
	r.mu.Unlock()
	r.wg.Done()
}

// dequeued counts a job out of the queue (it got a slot, or never will).
func (r *Runner) dequeued() {
	r.mu.Lock()
	r.queued--
	r.mu.Unlock()
	r.cfg.Metrics.QueueChanged(-1)
}

// Local returns a turn this replica runs (queued or running) and the user
// whose conversation it belongs to; ok is false for any other turn. A
// stream of the turn starts from it without reading the store. The turn is
// as it was created or adopted: its ids hold, its status and seq are not
// kept current (the turn's events are).
func (r *Runner) Local(turnID string) (t toolmark.Turn, ownerID string, ok bool) {
	r.mu.Lock()
	j := r.jobs[turnID]
	r.mu.Unlock()
	if j == nil {
		return toolmark.Turn{}, "", false
	}
	return j.turn, j.ownerID, true
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
	j.stop(errCancelled)
	return true
}

// Wait blocks until turnID is final or ctx is done, and returns the turn as
// it then is. It follows the turn as every stream does (fanout.Hub.Follow).
func (r *Runner) Wait(ctx context.Context, turnID string) (toolmark.Turn, error) {
	t, err := r.cfg.Store.TurnByID(ctx, turnID)
	if err != nil || t.Status.Final() {
		return t, err
	}
	err = r.hub.Follow(ctx, t, t.LastSeq, fanout.Follower{
		Frames:    func([]fanout.Frame) error { return nil },
		Heartbeat: r.cfg.LeaseTTL,
	})
	if err != nil {
		return t, err
	}
	return r.cfg.Store.TurnByID(ctx, turnID)
}

// Drain stops accepting turns: Create answers ErrShuttingDown and this
// replica adopts nothing more. The turns still queued here are handed back
// (their lease released) for another replica to adopt and run; when
// another replica is alive, the running turns are handed over too: each
// agent stops, what it wrote is committed with the lease released, and the
// replica that adopts the turn continues the answer from its log. With no
// other replica, running turns go on and Shutdown waits for them.
func (r *Runner) Drain(ctx context.Context) {
	r.mu.Lock()
	r.closing = true
	var queued, running []*job
	for _, j := range r.jobs {
		if j.startedRunning() {
			running = append(running, j)
		} else {
			queued = append(queued, j)
		}
	}
	r.mu.Unlock()
	for _, j := range queued {
		j.handOver(ctx)
	}
	if len(running) == 0 {
		return
	}
	others, err := r.cfg.Store.OtherReplicas(ctx, r.cfg.Owner)
	if err != nil {
		r.log.Error("looking for other replicas; running turns stay here", "err", err)
		return
	}
	if others == 0 {
		r.log.Info("no other replica: running turns finish here", "turns", len(running))
		return
	}
	r.log.Info("handing running turns over", "turns", len(running), "replicas", others)
	for _, j := range running {
		j.stop(errHandedOver)
	}
}

// shutdownWait is how long Shutdown waits for the turns it cancelled to
// write their ends.
const shutdownWait = 500 * time.Millisecond

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
			j.stop(errShutdown)
		}
		r.mu.Unlock()
		select {
		case <-done:
		case <-time.After(shutdownWait):
			r.log.Warn("turns still finishing after shutdown; their ends are written on Close, or another replica finalises them")
		}
	}
	return nil
}

// Close stops the runner's background work: the committer (after writing
// what is pending), the listener (notifications of other replicas' events,
// cancel requests, this replica's liveness lock), lease renewals and
// sweeps. Call it after Shutdown, once the streams that need the listener
// are closed: a draining replica keeps serving its followers until then.
func (r *Runner) Close() {
	if r.stopLoop != nil {
		r.c.stop()
		r.stopLoop()
		<-r.loopDone
		r.stopLoop = nil
	}
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

// statusText writes the status line of the tags the runner closes itself.
var statusText = statustext.Text

// marshalData encodes an event's payload (a json.RawMessage as it is).
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
