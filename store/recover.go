package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark"
)

// Recovery: the turns of replicas that are gone. The store finds and locks
// them and hands them over as their log left them (LockedTurn); what to do
// with them — end a running one as interrupted, continue a handed-over one
// — is the runner's policy. A turn is ended by the same write (TurnWrite
// with Finish, see Commit) on every path.

// LockedTurn is a turn as its log left it: the stored snapshot of its
// answer (content, seq, tool-call rows, todos) and the events logged after
// that snapshot, oldest first.
type LockedTurn struct {
	TurnID    string
	MessageID string
	Snapshot  toolmark.SnapshotData
	Events    []toolmark.Event
}

// LastSeq is the seq of the turn's last logged event.
func (t LockedTurn) LastSeq() int64 {
	if n := len(t.Events); n > 0 {
		return max(t.Snapshot.Seq, t.Events[n-1].Seq)
	}
	return t.Snapshot.Seq
}

// EndFunc decides how a swept turn ends: the write, with Finish, that ends
// it (its events numbered after t.LastSeq()).
type EndFunc func(t LockedTurn) (TurnWrite, error)

// SweepExpired ends every running turn whose owner is gone (its lease
// expired, or no database session holds its liveness lock, see ListenAs)
// and returns their ids. (A queued turn of a gone owner has nothing to
// end: a live replica adopts and runs it, see Adopt.) For each turn, in
// its own transaction holding the turn's row lock (taken with SKIP LOCKED,
// so concurrent sweepers never end a turn twice), self takes the turn's
// lease, end is given the turn as its log left it, and the write it
// returns is committed by the statements of Commit. now is compared with
// expiries set by the database's clock.
//
// self is the caller's owner name; byLiveness says whether a turn whose
// owner holds no liveness lock counts as gone (a replica whose own lock is
// fresh after the database came back passes false). running are the turns
// the caller still runs or still has writes of in flight: a turn of its own
// among them is never swept, even with its lease expired (the caller is
// alive and will end it; a sweep beside its own group commit would write
// the turn twice).
func (db *DB) SweepExpired(ctx context.Context, now time.Time, self string, byLiveness bool, running []string, end EndFunc) ([]string, error) {
	swept := []string{}
	if running == nil {
		running = []string{}
	}
	for {
		id, err := db.sweepOne(ctx, now, self, byLiveness, running, end)
		if err != nil {
			return swept, err
		}
		if id == "" {
			return swept, nil
		}
		swept = append(swept, id)
	}
}

// sweepOne ends one turn whose owner is gone and returns its id, or ""
// when there is none left.
func (db *DB) sweepOne(ctx context.Context, now time.Time, self string, byLiveness bool, running []string, end EndFunc) (string, error) {
	var turnID string
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		var msgID string
		err := tx.QueryRow(ctx, `
			with `+liveOwners+`, gone as (
				select t.id from turns t
				where t.finished_at is null and t.status = 'running' and `+runningGone+`
				  and not (t.lease_owner = $3 and t.id = any($4))
				order by t.created_at
				limit 1
				for update of t skip locked
			)
			update turns t set lease_owner = $3
			from gone where t.id = gone.id
			returning t.id, t.assistant_message_id`, now, byLiveness, self, running).Scan(&turnID, &msgID)
		if errors.Is(err, pgx.ErrNoRows) {
			turnID = ""
			return nil
		} else if err != nil {
			return fmt.Errorf("finding turns to sweep: %w", err)
		}
		lt, err := db.lockedTurn(ctx, tx, turnID, msgID, true)
		if err != nil {
			return fmt.Errorf("sweeping turn %s: %w", turnID, err)
		}
		w, err := end(lt)
		if err != nil {
			return fmt.Errorf("sweeping turn %s: %w", turnID, err)
		}
		if err := db.checkWrite(w); err != nil {
			return fmt.Errorf("sweeping turn %s: %w", turnID, err)
		}
		if w.Finish == nil || w.TurnID != turnID {
			return fmt.Errorf("sweeping turn %s: the write does not end the turn", turnID)
		}
		lost, err := db.commit(ctx, tx, false, self, []TurnWrite{w})
		if err != nil {
			return fmt.Errorf("sweeping turn %s: %w", turnID, err)
		}
		if len(lost) > 0 {
			return fmt.Errorf("sweeping turn %s: %w", turnID, ErrLeaseLost)
		}
		db.log.Info("sweep: turn ended", "turn", turnID, "status", w.Finish.Status, "events", len(w.Events), "seq", w.lastSeq())
		return nil
	})
	if err != nil {
		return "", err
	}
	return turnID, nil
}

// lockedTurn reads a turn as its log left it. lock locks the message row
// (a sweep rewrites it).
func (db *DB) lockedTurn(ctx context.Context, q querier, turnID, msgID string, lock bool) (LockedTurn, error) {
	lt := LockedTurn{TurnID: turnID, MessageID: msgID}
	forUpdate := ""
	if lock {
		forUpdate = " for update"
	}
	snap := &lt.Snapshot
	snap.Status = toolmark.TurnRunning
	var reasoning []byte
	if err := q.QueryRow(ctx, `select content, seq, reasoning from messages where id = $1`+forUpdate, msgID).Scan(&snap.Content, &snap.Seq, &reasoning); err != nil {
		return lt, err
	}
	var err error
	if snap.Reasoning, err = parseReasoning(reasoning); err != nil {
		return lt, err
	}
	if snap.ToolCalls, err = toolCalls(ctx, q, turnID); err != nil {
		return lt, err
	}
	if snap.Todos, err = todosOf(ctx, q, turnID); err != nil {
		return lt, err
	}
	lt.Events, err = db.eventsAfter(ctx, q, turnID, snap.Seq, 1<<30)
	return lt, err
}

// AdoptedTurn is a turn that Adopt handed to a new owner.
type AdoptedTurn struct {
	Turn     toolmark.Turn
	OwnerID  string // the user who owns the conversation
	UserText string
	// Log is, for a running turn handed over by a draining replica, the
	// answer as its log left it, to be continued; nil for a queued turn.
	Log *LockedTurn
}

// Adopt gives owner the lease of up to limit turns that their replica
// will not run, oldest first, and returns them so that owner runs them:
// queued turns whose owner is gone (it died between creating a turn and
// running it, or handed it back while draining), and running turns that a
// draining replica handed over (no lease owner, hand-over time not run out)
// with their log, to be continued.
//
// byLiveness is as for SweepExpired.
func (db *DB) Adopt(ctx context.Context, owner string, ttl time.Duration, limit int, byLiveness bool) ([]AdoptedTurn, error) {
	rows, err := db.pool.Query(ctx, `
		with `+liveOwners+`, a as (
			select t.id from turns t
			where t.finished_at is null
			  and ((t.status = 'queued' and `+ownerGone("now()", "$4", "$1")+`)
			    or (t.status = 'running' and t.lease_owner is null and t.lease_expires_at >= now()))
			order by t.created_at
			limit $3
			for update of t skip locked
		), u as (
			update turns t set lease_owner = $1, lease_expires_at = now() + $2::interval
			from a where t.id = a.id
			returning t.*
		)
		select `+turnColumnsOf("u")+`, c.owner_id, m.content
		from u join conversations c on c.id = u.conversation_id join messages m on m.id = u.user_message_id
		order by u.created_at`, owner, ttl, limit, byLiveness)
	if err != nil {
		return nil, fmt.Errorf("adopting turns: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (AdoptedTurn, error) {
		var a AdoptedTurn
		var ts turnScan
		err := r.Scan(ts.dest(&a.OwnerID, &a.UserText)...)
		a.Turn = ts.turn()
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("adopting turns: %w", err)
	}
	for i := range out {
		a := &out[i]
		if a.Turn.Status != toolmark.TurnRunning {
			continue
		}
		lt, err := db.lockedTurn(ctx, db.pool, a.Turn.ID, a.Turn.AssistantMessageID, false)
		if err != nil {
			return out[:i], fmt.Errorf("adopting turn %s: %w", a.Turn.ID, err)
		}
		a.Log = &lt
		a.Turn.LastSeq = lt.LastSeq()
	}
	return out, nil
}

// TurnLog reads a turn as its log left it, in one read-only transaction
// that sees one commit: the stored snapshot of its message (content and
// seq, with the turn's status), its tool-call rows and todos, and the
// events after the snapshot's seq. Replayed, they give the turn as of its
// newest event (LastSeq), whatever commits land meanwhile.
func (db *DB) TurnLog(ctx context.Context, turnID string) (LockedTurn, error) {
	if !validID(turnID) {
		return LockedTurn{}, notFound("turn")
	}
	var lt LockedTurn
	err := pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var msgID string
		var status toolmark.TurnStatus
		if err := tx.QueryRow(ctx, `select assistant_message_id, status from turns where id = $1`, turnID).Scan(&msgID, &status); err != nil {
			return err
		}
		var err error
		lt, err = db.lockedTurn(ctx, tx, turnID, msgID, false)
		lt.Snapshot.Status = status
		return err
	})
	if err != nil {
		return LockedTurn{}, dbErr("reading a turn's log", "turn", err)
	}
	return lt, nil
}
