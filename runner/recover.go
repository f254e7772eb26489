package runner

import (
	"context"
	"log/slog"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
	"github.com/toolmark/toolmark/toolcallmarkup"
	"github.com/toolmark/toolmark/turnstate"
)

// Interrupted is the error of a turn, and of its unfinished tool calls and
// todos, that the sweep ended because the server running it was gone.
const Interrupted = "interrupted"

// stateOf rebuilds a turn's state from its log: the stored snapshot and
// the events after it.
func stateOf(t store.LockedTurn, log *slog.Logger) *turnstate.State {
	st, err := turnstate.FromSnapshot(t.Snapshot)
	if err != nil {
		// A snapshot that does not parse cannot be rebuilt; keep going
		// without its live tags.
		log.Error("stored content does not parse", "turn", t.TurnID, "err", err)
		st = turnstate.New()
	}
	st.StatusText = statusText
	for _, e := range t.Events {
		if err := st.ApplyEvent(e); err != nil {
			log.Warn("skipping an event that does not apply", "turn", t.TurnID, "seq", e.Seq, "err", err)
		}
	}
	_ = st.TakeChanges() // what the log holds is stored already
	return st
}

// Interrupt is the sweep's policy (a store.EndFunc): a running turn whose
// server is gone ends as interrupted, through ordinary events — every open
// tag and unfinished todo ended with error "interrupted", then turn_failed
// — with its tool-call rows and todos brought in line, in the write that
// ends any turn.
func Interrupt(t store.LockedTurn) (store.TurnWrite, error) {
	return interrupt(t, slog.Default())
}

func interrupt(t store.LockedTurn, log *slog.Logger) (store.TurnWrite, error) {
	st := stateOf(t, log)
	now := time.Now().UTC().Truncate(time.Microsecond)
	drafts := append(st.CloseOpen(toolcallmarkup.StatusError, Interrupted), toolmark.Draft{
		Type: toolmark.EventTurnFailed,
		Data: toolmark.TurnEndData{Status: toolmark.TurnInterrupted, Error: Interrupted, Code: Interrupted},
	})
	w := store.TurnWrite{TurnID: t.TurnID, MessageID: t.MessageID,
		Finish: &store.Finish{Status: toolmark.TurnInterrupted, Error: Interrupted, Usage: st.Usage()}}
	seq := t.LastSeq()
	for _, d := range drafts {
		if err := st.Apply(d, now); err != nil {
			return w, err
		}
		seq++
		w.Events = append(w.Events, eventOf(seq, d, now, log))
	}
	ch := st.TakeChanges()
	w.ToolCalls = closeRows(ch.Calls, t.Snapshot.ToolCalls, now)
	if ch.Todos != nil {
		w.Todos = &ch.Todos
	}
	content := st.Content()
	w.Content, w.Reasoning = &content, st.Reasoning()
	return w, nil
}

// closeRows adds to the records of calls the state ended those stored rows
// still open that the state does not know (a snapshot that did not parse).
func closeRows(changed, stored []toolmark.ToolCallRecord, now time.Time) []toolmark.ToolCallRecord {
	seen := make(map[string]bool, len(changed))
	for _, c := range changed {
		seen[c.ID] = true
	}
	for _, r := range stored {
		if seen[r.ID] || toolcallmarkup.Status(r.Status).Final() {
			continue
		}
		r.Status, r.Error, r.FinishedAt = string(toolcallmarkup.StatusError), Interrupted, &now
		changed = append(changed, r)
	}
	return changed
}

// eventOf is a draft numbered and timed, its data marshalled once: the
// event the store logs and the followers receive.
func eventOf(seq int64, d toolmark.Draft, at time.Time, log *slog.Logger) toolmark.Event {
	data, err := marshalData(d.Data)
	if err != nil {
		// A payload that cannot be encoded is a bug of the agent; log it
		// as an empty payload rather than lose the seq.
		log.Error("encoding event data", "type", d.Type, "err", err)
		data = []byte("{}")
	}
	return toolmark.Event{Seq: seq, Type: d.Type, Data: data, Time: at}
}

// running lists the turns this replica still runs or still has writes of
// in flight: its sweep leaves them alone even when their leases expired
// (a slow commit, say), for it is alive and ends them itself.
func (r *Runner) running() []string {
	r.mu.Lock()
	ids := make([]string, 0, len(r.jobs))
	for id := range r.jobs {
		ids = append(ids, id)
	}
	r.mu.Unlock()
	return r.c.pending(ids)
}

// sweep finalises the running turns of replicas that are gone and adopts
// their queued turns.
func (r *Runner) sweep(ctx context.Context) ([]string, error) {
	// Liveness locks say who is gone only once this replica has held its
	// own for a while: after the database comes back, the others need a
	// moment to take theirs again.
	byLiveness := r.cfg.Store.LivenessHeldFor() >= LivenessTrustAfter
	ids, err := r.cfg.Store.SweepExpired(ctx, time.Now(), r.cfg.Owner, byLiveness, r.running(), func(t store.LockedTurn) (store.TurnWrite, error) {
		return interrupt(t, r.log)
	})
	for _, id := range ids {
		r.log.Warn("finalised a turn left behind by a stopped server", "turn", id)
		r.cfg.Metrics.TurnEnded(string(toolmark.TurnInterrupted))
		r.hub.Poll(id)
	}
	if err != nil {
		return ids, err
	}
	r.mu.Lock()
	closing := r.closing
	r.mu.Unlock()
	if closing {
		return ids, nil
	}
	adopted, err := r.cfg.Store.Adopt(ctx, r.cfg.Owner, r.cfg.LeaseTTL, 100, byLiveness)
	for _, a := range adopted {
		var st *turnstate.State
		if a.Log != nil {
			r.log.Info("continuing a turn another server handed over", "turn", a.Turn.ID, "seq", a.Turn.LastSeq)
			st = stateOf(*a.Log, r.log)
		} else {
			r.log.Warn("adopted a queued turn left behind by a stopped server", "turn", a.Turn.ID)
		}
		r.enqueue(a.Turn, a.OwnerID, a.UserText, a.Turn.LastSeq, st)
	}
	return ids, err
}
