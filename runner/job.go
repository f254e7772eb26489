package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
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
	life       life // where the job is: moved only by to
	state      *turnstate.State
	pending    []pendingEvent
	nextSeq    int64 // seq of the next event
	lastCommit int64 // seq of the newest committed event
	startWrite bool  // turn_started is pending: the write moves the turn to running
	resumed    bool  // continuing an answer another replica handed over
	lastSave   time.Time
	dirty      bool          // queued in the committer's list
	seeds      seeding       // followers waiting for the committed state (seed.go)
	done       chan struct{} // closed on phaseEnded (by to)
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

// stop asks the job's agent to stop for cause: the job moves to
// phaseStopping, which carries the cause (see life.stopping), and its
// context, the agent's, is cancelled.
func (j *job) stop(cause error) {
	j.mu.Lock()
	if l, ok := j.life.stopping(cause); ok && !j.to(l) {
		j.log.Error("the phase table refuses a stop", "from", j.life.phase, "why", cause) // TestStopping keeps this from happening
	}
	j.mu.Unlock()
	j.cancelFn(cause)
}

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

// startedRunning reports whether the job's agent runs and was not asked
// to stop.
func (j *job) startedRunning() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.life.phase == phaseRunning || j.life.phase == phaseFailing
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
	if err := j.life.emits(); err != nil {
		return err
	}
	if len(j.pending) >= j.r.cfg.MaxPending {
		err := toolmark.Errorf(toolmark.EUNAVAILABLE, "the database is unreachable; the answer could not be saved")
		// Running, the job fails from now on; stopping, the agent is
		// returning, and its end is written as its stop says.
		if j.to(life{phase: phaseFailing, why: err}) {
			j.log.Error("too many events wait for the database; the turn fails", "pending", len(j.pending))
		}
		return err
	}
	return j.applyLocked(d)
}

// applyLocked applies d to the turn's state and queues it, whatever the
// job's life: the events that end the turn go out after the agent's
// stopped (finish).
func (j *job) applyLocked(d toolmark.Draft) error {
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
	switch j.life.phase {
	case phaseEnding:
		finish = j.life.finish
	case phaseHandingOver:
		handOver = j.r.cfg.LeaseTTL
	}
	if len(j.pending) == 0 && handOver == 0 {
		j.mu.Unlock()
		return w, nil, false
	}
	pending := j.pending
	j.pending = nil
	j.seedAtTakeLocked()
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
	j.seedCommittedLocked()
	j.mu.Unlock()
	if (w.Finish != nil || w.HandOver > 0) && !j.end(nil) {
		j.log.Warn("the turn's last write committed after its job was abandoned")
	}
}

// fail makes every later emit fail with err and abandons the turn's
// writes: the turn is left to the sweep of whichever replica finds its
// lease expired.
func (j *job) fail(err error) {
	j.mu.Lock()
	j.pending = nil
	ended := j.to(life{phase: phaseEnded, why: err}) // refused once ended: the first end stays
	j.mu.Unlock()
	if ended {
		j.cancelFn(err)
	}
}

// end moves j to phaseEnded: its end (or hand-over) is committed (err
// nil), or it was abandoned (err says why). It reports false for a job
// that had ended already, which stays as it ended.
func (j *job) end(err error) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.to(life{phase: phaseEnded, why: err})
}

// endError is why the job ended without its end written; nil when it was
// written (or it has not ended).
func (j *job) endError() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.life.phase != phaseEnded {
		return nil
	}
	return j.life.why
}

// run waits for a slot, runs the agent and finalises the turn.
func (j *job) run() {
	r := j.r
	defer r.forget(j)
	select {
	case r.slot <- struct{}{}:
	case <-j.ctx.Done():
		// Stopped or released while queued: finalise first, so Shutdown,
		// which waits for forget, never returns with the turn still open.
		r.dequeued()
		j.finish(nil)
		return
	}
	j.mu.Lock()
	running := j.to(life{phase: phaseRunning})
	j.mu.Unlock()
	r.dequeued()
	if !running { // stopped or released meanwhile
		<-r.slot
		j.finish(nil)
		return
	}
	r.cfg.Metrics.RunningChanged(1)
	defer func() {
		<-r.slot
		r.cfg.Metrics.RunningChanged(-1)
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
	released := j.to(life{phase: phaseReleased})
	j.mu.Unlock()
	if !released {
		return
	}
	if err := j.r.cfg.Store.ReleaseLease(ctx, j.turn.ID, j.r.cfg.Owner); err != nil {
		j.log.Error("handing a queued turn over", "err", err)
	}
	j.cancelFn(errHandedOver)
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
	} else if err := j.emit(j.ctx, toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{Model: cmp.Or(j.turn.Model, r.cfg.ModelName)}}); err != nil {
		return in, err
	}
	tc, err := r.cfg.Store.TurnContext(context.WithoutCancel(j.ctx), j.turn.ConversationID, j.turn.ID)
	if err != nil {
		return in, fmt.Errorf("loading the conversation's history: %w", err)
	}
	in.Summary, in.History = tc.Summary, tc.History
	return in, r.cfg.Run(j.ctx, in, j.emit)
}

// finish ends the job as its life says: a turn stopped for another
// replica's sake is handed over or left; otherwise every open tag and
// unfinished todo gets a final status, the terminal event is emitted, and
// finish waits until it is committed together with the turn's end.
func (j *job) finish(runErr error) {
	j.mu.Lock()
	l := j.life
	switch {
	case l.phase == phaseStopping && errors.Is(l.why, errLeaseLost), l.phase == phaseFailing:
		// Another replica finalises the turn, or nothing can be written.
		if !j.to(life{phase: phaseEnded, why: l.why}) {
			j.log.Error("the phase table refuses to end a job", "from", l.phase) // stopping and failing may end
		}
		j.mu.Unlock()
		return
	case l.phase == phaseStopping && errors.Is(l.why, errHandedOver):
		j.mu.Unlock()
		j.handOverRunning()
		return
	}
	end := j.endOf(l, runErr)
	if !j.to(life{phase: phaseEnding, finish: &end.finish}) {
		j.mu.Unlock()
		return // ended already (abandoned, or its lease lost), or released
	}
	// Under the same lock: the committer takes the end with its events.
	for _, d := range j.state.CloseOpen(end.tagStatus, closeReason(end.tagStatus, end.data.Error)) {
		j.applyEnd(d)
	}
	j.applyEnd(toolmark.Draft{Type: end.finish.Status.EndEvent(), Data: end.data})
	j.mu.Unlock()
	j.awaitEnd(end.finish)
}

// turnEnd is how a turn ends: its terminal event, its stored end and the
// status its open tags close with.
type turnEnd struct {
	data      toolmark.TurnEndData
	finish    store.Finish
	tagStatus toolcallmarkup.Status
}

// endOf is the end of a turn whose job is in life l and whose agent
// returned runErr; j.mu is held.
func (j *job) endOf(l life, runErr error) turnEnd {
	status, tagStatus, errText, code := toolmark.TurnCompleted, toolcallmarkup.StatusError, "", ""
	switch {
	case l.phase == phaseStopping:
		status, tagStatus, errText, code = toolmark.TurnCancelled, toolcallmarkup.StatusCancelled, l.why.Error(), toolmark.ECANCELLED
	case runErr != nil:
		status, errText, code = toolmark.TurnFailed, toolmark.ErrorMessage(runErr), toolmark.ErrorCode(runErr)
		if errText == "internal error" {
			errText = "the answer could not be completed"
		}
		j.log.Error("turn failed", "err", runErr)
	}
	usage := j.state.Usage()
	end := turnEnd{data: toolmark.TurnEndData{Status: status, Error: errText, Code: code}, tagStatus: tagStatus,
		finish: store.Finish{Status: status, Error: errText, Usage: usage}}
	if usage != (toolmark.Usage{}) {
		end.data.Usage = &usage
	}
	return end
}

// awaitEnd waits until the turn's end is committed, and counts it.
func (j *job) awaitEnd(end store.Finish) {
	r := j.r
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
	usage := end.Usage
	r.cfg.Metrics.TurnEnded(string(end.Status))
	r.cfg.Metrics.TokensUsed(usage.InputTokens, usage.OutputTokens)
	j.log.Info("turn ended", "status", end.Status, "events", j.committedSeq(), "input_tokens", usage.InputTokens, "output_tokens", usage.OutputTokens)
}

// handOverRunning ends a running turn's job without ending the turn: the
// tags its agent left open are cancelled, and its last write releases the
// lease for another replica to continue the answer (see Drain).
func (j *job) handOverRunning() {
	r := j.r
	j.mu.Lock()
	if !j.to(life{phase: phaseHandingOver}) {
		j.mu.Unlock()
		return // ended already: abandoned, or its lease lost
	}
	for _, d := range j.state.CloseOpen(toolcallmarkup.StatusCancelled, errHandedOver.Error()) {
		j.applyEnd(d)
	}
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

// applyEnd applies and queues an event that ends the turn's work (j.mu
// held); one that does not apply is logged and left out.
func (j *job) applyEnd(d toolmark.Draft) {
	if err := j.applyLocked(d); err != nil {
		j.log.Error("ending the turn's work", "type", d.Type, "err", err)
	}
}

// closeReason is the error text of the tags a turn's end closes.
func closeReason(_ toolcallmarkup.Status, errText string) string {
	if errText == "" {
		return "the turn ended before the tool finished"
	}
	return errText
}
