package runner

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// job is one turn on this replica, from Submit to its final status.
type job struct {
	r        *Runner
	turn     toolmark.Turn
	ownerID  string
	userText string
	ctx      context.Context
	cancelFn context.CancelCauseFunc
	b        *batcher
}

func newJob(r *Runner, sj Job) *job {
	ctx, cancel := context.WithCancelCause(context.Background())
	j := &job{r: r, turn: sj.Turn, ownerID: sj.OwnerID, userText: sj.UserText, ctx: ctx, cancelFn: cancel}
	j.b = newBatcher(r, sj.Turn)
	return j
}

// cancel stops the job with the given cause; the first cause wins.
func (j *job) cancel(cause error) { j.cancelFn(cause) }

// run waits for a slot, runs the agent and finalises the turn.
func (j *job) run() {
	r := j.r
	log := r.log.With("turn", j.turn.ID, "conversation", j.turn.ConversationID)
	defer j.b.close()
	select {
	case r.slot <- struct{}{}:
	case <-j.ctx.Done():
		// Cancelled while queued: finalise first, so Shutdown, which waits
		// for forget, never returns with the turn still open.
		j.finish(log, nil)
		r.forget(j, true)
		return
	}
	r.mu.Lock()
	r.queued--
	r.mu.Unlock()
	r.cfg.Metrics.QueueChanged(-1)
	r.cfg.Metrics.RunningChanged(1)
	defer func() {
		<-r.slot
		r.cfg.Metrics.RunningChanged(-1)
		r.forget(j, false)
	}()

	err := j.runAgent(log)
	j.finish(log, err)
}

func (j *job) runAgent(log interface{ Error(string, ...any) }) (err error) {
	r := j.r
	defer func() {
		if p := recover(); p != nil {
			log.Error("agent panicked", "panic", p, "stack", string(debug.Stack()))
			err = toolmark.Errorf(toolmark.EINTERNAL, "the agent stopped on an internal error")
		}
	}()
	bg := context.WithoutCancel(j.ctx)
	if err := r.cfg.Store.MarkTurnRunning(bg, j.turn.ID); err != nil {
		return fmt.Errorf("marking the turn running: %w", err)
	}
	if err := j.b.emit(bg, Event{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{Model: r.cfg.ModelName}}); err != nil {
		return err
	}
	in := Input{Turn: j.turn, UserText: j.userText}
	summary, through, err := r.cfg.Store.ConversationSummary(bg, j.turn.ConversationID)
	if err != nil {
		return fmt.Errorf("loading the conversation's summary: %w", err)
	}
	in.Summary = summary
	hist, err := r.cfg.Store.ConversationHistory(bg, j.turn.ConversationID, j.turn.ID)
	if err != nil {
		return fmt.Errorf("loading the conversation's history: %w", err)
	}
	hist = store.HistoryAfter(hist, through)
	in.History = hist
	return r.cfg.Run(j.ctx, in, j.b.emit)
}

// finish gives every open tag a final status, logs the terminal event,
// saves the content and marks the turn final.
func (j *job) finish(log interface {
	Error(string, ...any)
	Info(string, ...any)
}, runErr error) {
	r := j.r
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	status, tagStatus, errText, code := toolmark.TurnCompleted, toolcallmarkup.StatusError, "", ""
	cause := context.Cause(j.ctx)
	switch {
	case errors.Is(cause, errLeaseLost):
		return // another replica finalised the turn
	case errors.Is(cause, errCancelled), errors.Is(cause, errShutdown):
		status, tagStatus, errText, code = toolmark.TurnCancelled, toolcallmarkup.StatusCancelled, cause.Error(), "cancelled"
	case runErr != nil:
		status, errText, code = toolmark.TurnFailed, toolcallmarkup.Truncate(runErr.Error(), 300), toolmark.ErrorCode(runErr)
		log.Error("turn failed", "err", runErr)
	}
	// From here on only this goroutine persists: the terminal event must
	// commit together with the turn's end, never in a background batch.
	j.b.close()
	j.b.closeOpenTags(ctx, tagStatus, errText)
	typ := map[toolmark.TurnStatus]toolmark.EventType{
		toolmark.TurnCompleted: toolmark.EventTurnCompleted,
		toolmark.TurnFailed:    toolmark.EventTurnFailed,
		toolmark.TurnCancelled: toolmark.EventTurnCancelled,
	}[status]
	_ = j.b.emit(ctx, Event{Type: typ, Data: toolmark.TurnEndData{Status: status, Error: errText, Code: code}})
	_, seq, err := j.b.flushFinal(ctx, store.Finish{Status: status, Error: errText})
	if err != nil {
		// The lease stays with us until it expires; the sweeper then
		// finalises the turn from the log.
		log.Error("finalising turn", "err", err)
		return
	}
	r.hub.Publish(j.turn.ID, seq)
	r.cfg.Metrics.TurnEnded(string(status))
	log.Info("turn ended", "status", status, "events", seq)
	if status == toolmark.TurnCompleted && r.cfg.After != nil {
		if err := r.cfg.After(ctx, j.turn); err != nil {
			log.Error("after-turn work", "err", err)
		}
	}
}
