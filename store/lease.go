package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// InterruptedError is the error text given to turns and tool calls that
// SweepExpired finalises.
const InterruptedError = "interrupted"

// AcquireLease makes owner the holder of a queued or running turn's lease
// until ttl from now (by the database's clock). It is ECONFLICT when another
// owner holds an unexpired lease or the turn is already final.
func (db *DB) AcquireLease(ctx context.Context, turnID, owner string, ttl time.Duration) error {
	if !validID(turnID) {
		return notFound("turn")
	}
	if !validID(owner) || ttl <= 0 {
		return toolmark.Errorf(toolmark.EINVALID, "lease needs an owner and a positive ttl")
	}
	tag, err := db.pool.Exec(ctx, `
		update turns set lease_owner = $2, lease_expires_at = now() + $3::interval
		where id = $1 and status in ('queued', 'running')
		  and (lease_owner is null or lease_owner = $2 or lease_expires_at < now())`,
		turnID, owner, ttl)
	if err != nil {
		return fmt.Errorf("acquiring lease: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return db.turnConflict(ctx, turnID, "turn is leased by another owner or finished")
	}
	return nil
}

// RenewLease extends owner's lease on a turn to ttl from now. It is
// ECONFLICT when owner no longer holds the lease (another owner took it
// after it expired, or the turn was finalised, for instance by a sweep).
func (db *DB) RenewLease(ctx context.Context, turnID, owner string, ttl time.Duration) error {
	if !validID(turnID) {
		return notFound("turn")
	}
	if ttl <= 0 {
		return toolmark.Errorf(toolmark.EINVALID, "lease needs a positive ttl")
	}
	tag, err := db.pool.Exec(ctx, `
		update turns set lease_expires_at = now() + $3::interval
		where id = $1 and lease_owner = $2 and status in ('queued', 'running')`,
		turnID, owner, ttl)
	if err != nil {
		return fmt.Errorf("renewing lease: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return db.turnConflict(ctx, turnID, "lease lost")
	}
	return nil
}

// ReleaseLease gives up owner's lease on a turn; it does nothing when owner
// does not hold it.
func (db *DB) ReleaseLease(ctx context.Context, turnID, owner string) error {
	if !validID(turnID) {
		return notFound("turn")
	}
	var exists bool
	err := db.pool.QueryRow(ctx, `
		with u as (
			update turns set lease_owner = null, lease_expires_at = null
			where id = $1 and lease_owner = $2
			returning 1
		)
		select exists (select 1 from u) or exists (select 1 from turns where id = $1)`, turnID, owner).Scan(&exists)
	if err != nil {
		return fmt.Errorf("releasing lease: %w", err)
	}
	if !exists {
		return notFound("turn")
	}
	return nil
}

// RequestCancel records that the owner wants a turn cancelled and notifies
// ChannelCancel with the turn id, so the replica running it stops it. It is
// idempotent, does nothing to a finished turn, and returns the turn.
func (db *DB) RequestCancel(ctx context.Context, ownerID, turnID string) (toolmark.Turn, error) {
	if !validID(turnID) || !validID(ownerID) {
		return toolmark.Turn{}, notFound("turn")
	}
	var t toolmark.Turn
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		var err error
		t, err = scanTurn(tx.QueryRow(ctx, `
			select `+turnColumns+` from turns t join conversations c on c.id = t.conversation_id
			where t.id = $1 and c.owner_id = $2
			for update of t`, turnID, ownerID))
		if err != nil {
			return dbErr("requesting cancel", "turn", err)
		}
		if t.Status.Final() {
			return nil
		}
		_, err = tx.Exec(ctx, `
			update turns set cancel_requested = true where id = $1;`, turnID)
		if err != nil {
			return fmt.Errorf("requesting cancel: %w", err)
		}
		_, err = tx.Exec(ctx, `select pg_notify('`+ChannelCancel+`', $1)`, turnID)
		if err != nil {
			return fmt.Errorf("requesting cancel: %w", err)
		}
		return nil
	})
	return t, err
}

// CancelRequested reports whether a cancel was requested for a turn.
func (db *DB) CancelRequested(ctx context.Context, turnID string) (bool, error) {
	if !validID(turnID) {
		return false, notFound("turn")
	}
	var c bool
	err := db.pool.QueryRow(ctx, `select cancel_requested from turns where id = $1`, turnID).Scan(&c)
	if err != nil {
		return false, dbErr("reading cancel request", "turn", err)
	}
	return c, nil
}

// SweepExpired finalises every queued or running turn whose lease expired
// before now and returns their ids. For each turn, in its own transaction
// holding the turn's row lock (taken with SKIP LOCKED, so concurrent
// sweepers never finalise a turn twice): the content is rebuilt from the
// stored snapshot and the events after it, every tag that is not final is
// set to error "interrupted", the tool-call rows follow, a tool_call_error
// event per changed tag and a turn_failed event are appended, and turn and
// message are marked interrupted. A turn that never had a lease is not
// swept, so a replica keeps a lease on the turns it has queued. now is
// compared with expiries set by the database's clock.
func (db *DB) SweepExpired(ctx context.Context, now time.Time) ([]string, error) {
	swept := []string{}
	for {
		id, err := db.sweepOne(ctx, now)
		if err != nil {
			return swept, err
		}
		if id == "" {
			return swept, nil
		}
		swept = append(swept, id)
	}
}

// sweepOne finalises one expired turn and returns its id, or "" when there
// is none left.
func (db *DB) sweepOne(ctx context.Context, now time.Time) (string, error) {
	var turnID string
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		var msgID, content string
		var seq int64
		err := tx.QueryRow(ctx, `
			select t.id, t.assistant_message_id
			from turns t
			where t.status in ('queued', 'running') and t.lease_expires_at < $1
			order by t.lease_expires_at
			limit 1
			for update of t skip locked`, now).Scan(&turnID, &msgID)
		if errors.Is(err, pgx.ErrNoRows) {
			turnID = ""
			return nil
		} else if err != nil {
			return fmt.Errorf("finding expired turns: %w", err)
		}
		if err := tx.QueryRow(ctx, `select content, seq from messages where id = $1 for update`, msgID).Scan(&content, &seq); err != nil {
			return fmt.Errorf("sweeping turn %s: %w", turnID, err)
		}
		events, err := db.eventsAfter(ctx, tx, turnID, seq, 1<<30)
		if err != nil {
			return fmt.Errorf("sweeping turn %s: %w", turnID, err)
		}
		d, err := toolcallmarkup.NewDocument(content)
		if err != nil {
			// A snapshot that does not parse cannot be rebuilt; keep the
			// turn's text but no live tags.
			db.log.Error("sweep: stored content does not parse", "turn", turnID, "err", err)
			d, _ = toolcallmarkup.NewDocument("")
		}
		for _, e := range events {
			if err := ApplyEvent(d, e); err != nil {
				db.log.Warn("sweep: skipping an event that does not apply", "turn", turnID, "seq", e.Seq, "err", err)
			}
		}
		changed := d.Finalize(toolcallmarkup.StatusError, InterruptedError)
		in := make([]EventInput, 0, len(changed)+1)
		for _, id := range changed {
			tc, _ := d.Get(id)
			in = append(in, EventInput{Type: toolmark.EventToolCallError, Time: now, Data: toolmark.ToolCallData{
				ToolCallID: tc.ID,
				ParentID:   tc.ParentID,
				Name:       tc.Type,
				Status:     string(tc.Status),
				Markup:     toolcallmarkup.OpenTag(tc),
				Error:      InterruptedError,
			}})
		}
		in = append(in, EventInput{Type: toolmark.EventTurnFailed, Time: now, Data: toolmark.TurnEndData{
			Status: toolmark.TurnInterrupted, Error: InterruptedError, Code: InterruptedError,
		}})
		appended, err := db.appendEvents(ctx, tx, turnID, msgID, in)
		if err != nil {
			return fmt.Errorf("sweeping turn %s: %w", turnID, err)
		}
		lastSeq := appended[len(appended)-1].Seq
		if _, err := tx.Exec(ctx, `
			update tool_calls set status = 'error', error = $2, finished_at = coalesce(finished_at, now())
			where turn_id = $1 and status not in ('success', 'error', 'cancelled')`, turnID, InterruptedError); err != nil {
			return fmt.Errorf("sweeping turn %s: %w", turnID, err)
		}
		if _, err := tx.Exec(ctx, `
			update turns set status = 'interrupted', error = $2, finished_at = now(), lease_owner = null, lease_expires_at = null
			where id = $1`, turnID, InterruptedError); err != nil {
			return fmt.Errorf("sweeping turn %s: %w", turnID, err)
		}
		if _, err := tx.Exec(ctx, `
			update messages set content = $2, seq = $3, status = 'interrupted', updated_at = now()
			where id = $1`, msgID, d.String(), lastSeq); err != nil {
			return fmt.Errorf("sweeping turn %s: %w", turnID, err)
		}
		db.log.Info("sweep: turn interrupted", "turn", turnID, "toolCalls", len(changed), "seq", lastSeq)
		return nil
	})
	if err != nil {
		return "", err
	}
	return turnID, nil
}
