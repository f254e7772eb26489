package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/fanout"
	"github.com/toolmark/toolmark/store"
	"github.com/toolmark/toolmark/toolcallmarkup"
	"github.com/toolmark/toolmark/turnstate"
)

// saveEvery is the longest the stored content of a turn that streams only
// text lags behind its log (it is always written at tool status changes and
// at the end).
const saveEvery = 5 * time.Second

// phase is where a job is in its life on this replica. It moves only
// forward, through to (the one transition function):
//
//	queued → running → ending → ended       (the turn's end committed)
//	queued → ending → ended                 (cancelled while queued)
//	running → handingOver → ended           (drain: the answer moves on)
//	queued → released                       (drain: given back while queued)
//	any → ended                             (the turn cannot be written any more)
type phase int

const (
	phaseQueued      phase = iota // waiting for a slot
	phaseRunning                  // the agent runs
	phaseEnding                   // the terminal event is emitted; its write is pending
	phaseHandingOver              // the last write releases the lease for another replica
	phaseReleased                 // given back to the other replicas while queued
	phaseEnded                    // the end (or hand-over) is committed, or abandoned
)

// next lists the phases each phase may move to.
var next = map[phase][]phase{
	phaseQueued:      {phaseRunning, phaseEnding, phaseReleased, phaseEnded},
	phaseRunning:     {phaseEnding, phaseHandingOver, phaseEnded},
	phaseEnding:      {phaseEnded},
	phaseHandingOver: {phaseEnded},
}

// to moves j to phase p and reports whether it could; j.mu is held.
func (j *job) to(p phase) bool {
	if !j.may(p) {
		return false
	}
	j.phase = p
	return true
}

// may reports whether j may move to phase p; j.mu is held.
func (j *job) may(p phase) bool { return slices.Contains(next[j.phase], p) }

// job is one turn on this replica, from Create to its final status. Its
// state is owned here: the agent's events are applied to it under mu, in
// the order they are emitted, and leave for the store only through take.
type job struct {
	r        *Runner
	turn     toolmark.Turn
	ownerID  string
	userText string
	ctx      context.Context
	cancelFn context.CancelCauseFunc
	log      *slog.Logger

	mu         sync.Mutex
	phase      phase
	state      *turnstate.State
	pending    []pendingEvent
	nextSeq    int64         // seq of the next event
	lastCommit int64         // seq of the newest committed event
	startWrite bool          // turn_started is pending: the write moves the turn to running
	resumed    bool          // continuing an answer another replica handed over
	ending     *store.Finish // phaseEnding: the turn's end, written with the terminal event
	err        error         // why emitting fails from now on
	lastSave   time.Time
	dirty      bool          // queued in the committer's list
	done       chan struct{} // closed on phaseEnded
	endErr     error         // why the job ended without its end written (nil: written)
}

type pendingEvent struct {
	seq int64
	d   toolmark.Draft
	at  time.Time
}

func newJob(r *Runner, t toolmark.Turn, ownerID, userText string, seq int64) *job {
	ctx, cancel := context.WithCancelCause(context.Background())
	st := turnstate.New()
	st.StatusText = statusText
	return &job{
		r: r, turn: t, ownerID: ownerID, userText: userText, ctx: ctx, cancelFn: cancel,
		log:   r.log.With("turn", t.ID, "conversation", t.ConversationID),
		state: st, nextSeq: seq + 1, lastCommit: seq, lastSave: time.Now(), done: make(chan struct{}),
	}
}

// cancel stops the job with the given cause; the first cause wins.
func (j *job) cancel(cause error) { j.cancelFn(cause) }

func (j *job) committedSeq() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.lastCommit
}

// ended reports whether the turn's end was written (or abandoned): a turn
// that just finished holds no lease any more, and that is no loss.
func (j *job) ended() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

func (j *job) startedRunning() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.phase == phaseRunning
}

// emit is the toolmark.EmitFunc handed to the agent: it applies the event to the
// turn's state and queues it for the next group commit. It never waits for
// the database; it fails once the turn cannot be persisted any more, which
// stops the agent.
func (j *job) emit(_ context.Context, d toolmark.Draft) error {
	j.mu.Lock()
	err := j.emitLocked(d)
	first := err == nil && j.markLocked()
	j.mu.Unlock()
	if first {
		j.r.c.enqueue(j) // once per commit window, not per event
	}
	return err
}

// markLocked records that j has something to commit and reports whether
// it was not queued yet.
func (j *job) markLocked() bool {
	first := !j.dirty
	j.dirty = true
	return first
}

func (j *job) emitLocked(d toolmark.Draft) error {
	if j.err != nil {
		return j.err
	}
	if j.phase != phaseQueued && j.phase != phaseRunning {
		return errors.New("the turn has ended")
	}
	if len(j.pending) >= j.r.cfg.MaxPending {
		j.err = toolmark.Errorf(toolmark.EUNAVAILABLE, "the database is unreachable; the answer could not be saved")
		return j.err
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	if err := j.state.Apply(d, at); err != nil {
		return fmt.Errorf("applying %s: %w", d.Type, err)
	}
	if d.Type == toolmark.EventTurnStarted {
		j.startWrite = true
	}
	if j.mergeTextLocked(d) {
		return nil
	}
	j.pending = append(j.pending, pendingEvent{seq: j.nextSeq, d: d, at: at})
	j.nextSeq++
	return nil
}

// maxMergedText bounds the text of a text_delta made of several.
const maxMergedText = 8 << 10

// mergeTextLocked appends the text of the text_delta d to the turn's last
// pending event when that is a text_delta too, and reports whether it did.
// Text that arrives while the turn's earlier text still waits for a commit
// joins it: the two would have been committed and sent together anyway,
// and one row and one frame cost less than two. An idle server commits
// each text_delta before the next arrives, so nothing waits longer; under
// load the group commit takes longer, and a turn writes one text row per
// commit however fast its model streams. The event keeps the time of its
// first text.
func (j *job) mergeTextLocked(d toolmark.Draft) bool {
	if d.Type != toolmark.EventTextDelta || len(j.pending) == 0 {
		return false
	}
	last := &j.pending[len(j.pending)-1]
	if last.d.Type != toolmark.EventTextDelta {
		return false
	}
	prev, ok := last.d.Data.(toolmark.TextDeltaData)
	next, ok2 := d.Data.(toolmark.TextDeltaData)
	if !ok || !ok2 || len(prev.Text)+len(next.Text) > maxMergedText {
		return false
	}
	last.d.Data = toolmark.TextDeltaData{Text: prev.Text + next.Text}
	return true
}

// take hands the committer what the turn has to write: its pending events
// with their data marshalled (once), and what they changed; and the frames
// to publish once that is committed (typed payload and SSE bytes, built
// once). ok is false when
// there is nothing to write.
func (j *job) take() (w store.TurnWrite, frames []fanout.Frame, ok bool) {
	j.mu.Lock()
	j.dirty = false
	finish, handOver := (*store.Finish)(nil), time.Duration(0) // handOver: how long the others have to adopt it
	switch j.phase {
	case phaseEnding:
		finish = j.ending
	case phaseHandingOver:
		handOver = j.r.cfg.LeaseTTL
	}
	if len(j.pending) == 0 && handOver == 0 {
		j.mu.Unlock()
		return w, nil, false
	}
	pending := j.pending
	j.pending = nil
	ch := j.state.TakeChanges()
	w = store.TurnWrite{TurnID: j.turn.ID, MessageID: j.turn.AssistantMessageID, Started: j.startWrite,
		ToolCalls: ch.Calls, Finish: finish, HandOver: handOver}
	j.startWrite = false
	if ch.Todos != nil {
		todos := ch.Todos
		w.Todos = &todos
	}
	if finish != nil || handOver > 0 || ch.Milestone || time.Since(j.lastSave) >= saveEvery {
		content := j.state.Content()
		w.Content, w.Reasoning = &content, j.state.Reasoning()
		j.lastSave = time.Now()
	}
	j.mu.Unlock()

	w.Events = make([]toolmark.Event, len(pending))
	frames = make([]fanout.Frame, len(pending))
	for i, p := range pending {
		e := eventOf(p.seq, p.d, p.at, j.log)
		e.TurnID, e.MessageID = j.turn.ID, j.turn.AssistantMessageID
		w.Events[i] = e
		frames[i] = fanout.NewFrame(e, p.d.Data) // the same event, for the followers
		frames[i].Tag = p.d.Tag
	}
	return w, frames, true
}

// committedWrite records that a write of the turn is in the store.
func (j *job) committedWrite(w store.TurnWrite) {
	j.mu.Lock()
	if n := len(w.Events); n > 0 {
		j.lastCommit = max(j.lastCommit, w.Events[n-1].Seq)
	}
	j.mu.Unlock()
	if w.Finish != nil || w.HandOver > 0 {
		j.end(nil)
	}
}

// fail makes every later emit fail with err and abandons the turn's
// writes: the turn is left to the sweep of whichever replica finds its
// lease expired.
func (j *job) fail(err error) {
	j.mu.Lock()
	if j.err == nil {
		j.err = err
	}
	j.pending = nil
	j.mu.Unlock()
	j.cancel(err)
	j.end(err)
}

// end moves j to phaseEnded: its end (or hand-over) is committed (err
// nil), or it was abandoned (err says why).
func (j *job) end(err error) {
	j.mu.Lock()
	ended := j.to(phaseEnded)
	if ended {
		j.endErr = err
	}
	j.mu.Unlock()
	if ended {
		close(j.done)
	}
}

// endError is why the job ended without its end written; nil when it was
// written.
func (j *job) endError() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.endErr
}

// run waits for a slot, runs the agent and finalises the turn.
func (j *job) run() {
	r := j.r
	select {
	case r.slot <- struct{}{}:
	case <-j.ctx.Done():
		if errors.Is(context.Cause(j.ctx), errHandedOver) {
			r.forget(j, true)
			return
		}
		// Cancelled while queued: finalise first, so Shutdown, which waits
		// for forget, never returns with the turn still open.
		j.finish(nil)
		r.forget(j, true)
		return
	}
	j.mu.Lock()
	handed := !j.to(phaseRunning) // released meanwhile
	j.mu.Unlock()
	r.dequeued()
	if handed {
		<-r.slot
		r.forget(j, false)
		return
	}
	r.cfg.Metrics.RunningChanged(1)
	defer func() {
		<-r.slot
		r.cfg.Metrics.RunningChanged(-1)
		r.forget(j, false)
	}()
	in, err := j.runAgent()
	j.finish(err)
	if err == nil && r.cfg.After != nil && j.endError() == nil && j.state.Status() == toolmark.TurnCompleted {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := r.cfg.After(ctx, in, j.state.Content()); err != nil {
			j.log.Error("after-turn work", "err", err)
		}
	}
}

var errHandedOver = errors.New("moved to another server")

// handOver gives a queued turn back to the other replicas (drain): its
// lease is released and its job ends without writing anything.
func (j *job) handOver(ctx context.Context) {
	j.mu.Lock()
	released := j.to(phaseReleased)
	j.mu.Unlock()
	if !released {
		return
	}
	if err := j.r.cfg.Store.ReleaseLease(ctx, j.turn.ID, j.r.cfg.Owner); err != nil {
		j.log.Error("handing a queued turn over", "err", err)
	}
	j.cancel(errHandedOver)
	j.log.Info("handed a queued turn over to another replica")
}

func (j *job) runAgent() (in Input, err error) {
	r := j.r
	defer func() {
		if p := recover(); p != nil {
			j.log.Error("agent panicked", "panic", p, "stack", string(debug.Stack()))
			err = toolmark.Errorf(toolmark.EINTERNAL, "the agent stopped on an internal error")
		}
	}()
	in = Input{Turn: j.turn, UserText: j.userText}
	if j.resumed {
		j.mu.Lock()
		in.Resume = &toolmark.Resume{Content: j.state.Content(), ToolCalls: j.state.Records(), Todos: j.state.Todos()}
		if r := j.state.Reasoning(); r != nil {
			in.Resume.Reasoning = r.Parts
		}
		j.mu.Unlock()
	} else if err := j.emit(j.ctx, toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{Model: r.cfg.ModelName}}); err != nil {
		return in, err
	}
	tc, err := r.cfg.Store.TurnContext(context.WithoutCancel(j.ctx), j.turn.ConversationID, j.turn.ID)
	if err != nil {
		return in, fmt.Errorf("loading the conversation's history: %w", err)
	}
	in.Summary, in.History = tc.Summary, tc.History
	return in, r.cfg.Run(j.ctx, in, j.emit)
}

// finish gives every open tag and unfinished todo a final status, emits the
// terminal event and waits until it is committed together with the turn's
// end.
func (j *job) finish(runErr error) {
	r := j.r
	status, tagStatus, errText, code := toolmark.TurnCompleted, toolcallmarkup.StatusError, "", ""
	cause := context.Cause(j.ctx)
	switch {
	case errors.Is(cause, errLeaseLost):
		j.end(cause)
		return // another replica finalised the turn
	case errors.Is(cause, errHandedOver):
		j.handOverRunning()
		return
	case errors.Is(cause, errCancelled), errors.Is(cause, errShutdown):
		status, tagStatus, errText, code = toolmark.TurnCancelled, toolcallmarkup.StatusCancelled, cause.Error(), toolmark.ECANCELLED
	case runErr != nil:
		status, errText, code = toolmark.TurnFailed, toolmark.ErrorMessage(runErr), toolmark.ErrorCode(runErr)
		if errText == "internal error" {
			errText = "the answer could not be completed"
		}
		j.log.Error("turn failed", "err", runErr)
	}
	j.mu.Lock()
	if !j.may(phaseEnding) {
		j.mu.Unlock()
		return // ended already: abandoned, or its lease lost
	}
	if j.err != nil && !errors.Is(cause, errCancelled) {
		j.mu.Unlock()
		j.end(j.err) // persisting failed: nothing more can be written
		return
	}
	j.err = nil // the closing events must go out even after a failed emit
	for _, d := range j.state.CloseOpen(tagStatus, closeReason(tagStatus, errText)) {
		_ = j.emitLocked(d)
	}
	end := toolmark.TurnEndData{Status: status, Error: errText, Code: code}
	usage := j.state.Usage()
	if usage != (toolmark.Usage{}) {
		end.Usage = &usage
	}
	_ = j.emitLocked(toolmark.Draft{Type: status.EndEvent(), Data: end})
	j.ending = &store.Finish{Status: status, Error: errText, Usage: usage}
	j.to(phaseEnding) // may was checked above, under the same lock
	j.mu.Unlock()
	r.c.mark(j)
	select {
	case <-j.done:
	case <-time.After(r.cfg.RetryFor + 10*time.Second):
		j.log.Error("the turn's end was not committed in time; another replica will finalise it")
		return
	}
	if err := j.endError(); err != nil {
		j.log.Error("finalising turn", "err", err)
		return
	}
	r.cfg.Metrics.TurnEnded(string(status))
	r.cfg.Metrics.TokensUsed(usage.InputTokens, usage.OutputTokens)
	j.log.Info("turn ended", "status", status, "events", j.committedSeq(), "input_tokens", usage.InputTokens, "output_tokens", usage.OutputTokens)
}

// handOverRunning ends a running turn's job without ending the turn: the
// tags its agent left open are cancelled, and its last write releases the
// lease for another replica to continue the answer (see Drain).
func (j *job) handOverRunning() {
	r := j.r
	j.mu.Lock()
	if !j.may(phaseHandingOver) {
		j.mu.Unlock()
		return // ended already: abandoned, or its lease lost
	}
	j.err = nil
	for _, d := range j.state.CloseOpen(toolcallmarkup.StatusCancelled, errHandedOver.Error()) {
		_ = j.emitLocked(d)
	}
	j.to(phaseHandingOver) // may was checked above, under the same lock
	j.mu.Unlock()
	r.c.mark(j)
	select {
	case <-j.done:
	case <-time.After(r.cfg.RetryFor + 10*time.Second):
	}
	if err := j.endError(); err != nil {
		j.log.Error("handing the turn over", "err", err)
		return
	}
	j.log.Info("handed the turn over to another replica", "events", j.committedSeq())
}

// closeReason is the error text of the tags a turn's end closes.
func closeReason(_ toolcallmarkup.Status, errText string) string {
	if errText == "" {
		return "the turn ended before the tool finished"
	}
	return errText
}
