package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/toolcallmarkup"
	"github.com/toolmark/toolmark/turnstate"
)

// InterruptedError is the error text given to turns and tool calls that
// SweepExpired finalises.
const InterruptedError = "interrupted"

// RenewLeases extends to ttl from now the lease of the turns ids that owner
// holds and that are queued or running, in one statement, and returns the
// ids of those turns and of those among them whose cancellation was
// requested. A turn of ids that is not among them was taken over or
// finished elsewhere. Turns of owner that are not in ids (a turn the owner
// gave up on) are left to expire.
func (db *DB) RenewLeases(ctx context.Context, owner string, ttl time.Duration, ids []string) (held, cancel []string, err error) {
	if ttl <= 0 {
		return nil, nil, toolmark.Errorf(toolmark.EINVALID, "lease needs a positive ttl")
	}
	valid := ids[:0:0]
	for _, id := range ids {
		if validID(id) {
			valid = append(valid, id)
		}
	}
	ids = valid
	rows, err := db.pool.Query(ctx, `
		update turns set lease_expires_at = now() + $2::interval
		where id = any($3) and lease_owner = $1 and status in ('queued', 'running')
		returning id, cancel_requested`, owner, ttl, ids)
	if err != nil {
		return nil, nil, fmt.Errorf("renewing leases: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var c bool
		if err := rows.Scan(&id, &c); err != nil {
			return nil, nil, fmt.Errorf("renewing leases: %w", err)
		}
		held = append(held, id)
		if c {
			cancel = append(cancel, id)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("renewing leases: %w", err)
	}
	return held, cancel, nil
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

// livenessClass is the first key of the session-level advisory lock by
// which a replica shows it is alive (see ListenAs); the second key is
// hashtext(owner).
const livenessClass = 7321

// ownerGone is the condition under which a turn's lease holder is taken for
// gone: its lease expired, or no session holds its liveness lock (its
// process died, or lost its database session), or it has no lease.
// It needs the CTE liveOwners, which reads the lock table once per query
// (a per-row lookup in pg_locks would snapshot the lock manager per turn).
//
// now, trust and self are SQL expressions: the time to compare expiries
// with, whether to trust the liveness locks (a replica whose own lock is
// fresh after the database came back does not: the others may not have
// taken theirs again yet), and the caller's own owner name (a replica never
// takes its own turns for gone).
func ownerGone(now, trust, self string) string {
	return `(t.lease_owner is null or t.lease_expires_at < ` + now + ` or (` + trust + ` and t.lease_owner <> ` + self +
		` and hashtext(t.lease_owner)::oid not in (select objid from live)))`
}

// runningGone is ownerGone for a running turn: one handed over (no lease
// owner) is left to the replica that adopts it until its hand-over time
// runs out.
var runningGone = `(case when t.lease_owner is null then t.lease_expires_at < $1 else ` + ownerGone("$1", "$2", "$3") + ` end)`

// liveOwners is the CTE "live": the liveness locks held in this database.
var liveOwners = `live as materialized (
	select l.objid from pg_locks l
	where l.locktype = 'advisory' and l.database = (select oid from pg_database where datname = current_database())
	  and l.classid = ` + strconv.Itoa(livenessClass) + ` and l.objsubid = 2 and l.granted)`

// SweepExpired finalises every running turn whose owner is gone (its
// lease expired, or no database session holds its liveness lock, see
// ListenAs) and returns their ids. (A queued turn of a gone owner has
// nothing to finalise: a live replica adopts and runs it, see
// AdoptQueued.) For each turn, in its
// own transaction holding the turn's row lock (taken with SKIP LOCKED, so
// concurrent sweepers never finalise a turn twice): the turn's state is
// rebuilt from the stored snapshot and the events after it (package
// turnstate), every open tag and unfinished todo is ended with error
// "interrupted" through ordinary events, a turn_failed event follows, the
// tool-call rows and todos are brought in line, and turn and message are
// marked interrupted. now is compared with expiries set by the database's
// clock.
//
// self is the caller's owner name; byLiveness says whether a turn whose
// owner holds no liveness lock counts as gone (see Sweeper).
func (db *DB) SweepExpired(ctx context.Context, now time.Time, self string, byLiveness bool) ([]string, error) {
	swept := []string{}
	for {
		id, err := db.sweepOne(ctx, now, self, byLiveness)
		if err != nil {
			return swept, err
		}
		if id == "" {
			return swept, nil
		}
		swept = append(swept, id)
	}
}

// sweepOne finalises one turn whose owner is gone and returns its id, or ""
// when there is none left.
func (db *DB) sweepOne(ctx context.Context, now time.Time, self string, byLiveness bool) (string, error) {
	var turnID string
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		var msgID string
		err := tx.QueryRow(ctx, `
			with `+liveOwners+`
			select t.id, t.assistant_message_id
			from turns t
			where t.status = 'running' and `+runningGone+`
			order by t.created_at
			limit 1
			for update of t skip locked`, now, byLiveness, self).Scan(&turnID, &msgID)
		if errors.Is(err, pgx.ErrNoRows) {
			turnID = ""
			return nil
		} else if err != nil {
			return fmt.Errorf("finding turns to sweep: %w", err)
		}
		return db.interrupt(ctx, tx, turnID, msgID, now)
	})
	if err != nil {
		return "", err
	}
	return turnID, nil
}

// interrupt ends a locked turn as interrupted, from its log.
func (db *DB) interrupt(ctx context.Context, tx pgx.Tx, turnID, msgID string, now time.Time) error {
	st, last, err := db.loadState(ctx, tx, turnID, msgID, true)
	if err != nil {
		return fmt.Errorf("sweeping turn %s: %w", turnID, err)
	}
	_ = st.TakeChanges()
	drafts := append(st.CloseOpen(toolcallmarkup.StatusError, InterruptedError), toolmark.Draft{
		Type: toolmark.EventTurnFailed,
		Data: toolmark.TurnEndData{Status: toolmark.TurnInterrupted, Error: InterruptedError, Code: InterruptedError},
	})
	rows := make([]EventRow, 0, len(drafts))
	for _, d := range drafts {
		if err := st.Apply(d, now); err != nil {
			return fmt.Errorf("sweeping turn %s: %w", turnID, err)
		}
		raw, err := json.Marshal(d.Data)
		if err != nil {
			return fmt.Errorf("sweeping turn %s: %w", turnID, err)
		}
		last++
		rows = append(rows, EventRow{Seq: last, Type: d.Type, Data: raw, Time: now})
	}
	if err := insertEvents(ctx, tx, turnID, rows); err != nil {
		return fmt.Errorf("sweeping turn %s: %w", turnID, err)
	}
	ch := st.TakeChanges()
	for _, c := range ch.Calls {
		if err := upsertToolCall(ctx, tx, turnID, c); err != nil {
			return fmt.Errorf("sweeping turn %s: %w", turnID, err)
		}
	}
	if ch.Todos != nil {
		raw, _ := json.Marshal(ch.Todos)
		if _, err := tx.Exec(ctx, `
			insert into todos (turn_id, todos) values ($1, $2::json)
			on conflict (turn_id) do update set todos = excluded.todos, updated_at = now()`, turnID, string(raw)); err != nil {
			return fmt.Errorf("sweeping turn %s: %w", turnID, err)
		}
	}
	if _, err := tx.Exec(ctx, `
		update tool_calls set status = 'error', error = $2, finished_at = coalesce(finished_at, now())
		where turn_id = $1 and status not in ('success', 'error', 'cancelled')`, turnID, InterruptedError); err != nil {
		return fmt.Errorf("sweeping turn %s: %w", turnID, err)
	}
	if _, err := tx.Exec(ctx, `
		update turns set status = 'interrupted', error = $2, finished_at = now(), last_seq = $3, lease_owner = null, lease_expires_at = null
		where id = $1`, turnID, InterruptedError, last); err != nil {
		return fmt.Errorf("sweeping turn %s: %w", turnID, err)
	}
	if _, err := tx.Exec(ctx, `
		update messages set content = $2, seq = $3, status = 'interrupted', updated_at = now()
		where id = $1`, msgID, st.Content(), last); err != nil {
		return fmt.Errorf("sweeping turn %s: %w", turnID, err)
	}
	if _, err := tx.Exec(ctx, `select pg_notify('`+ChannelEvents+`', $1)`, turnID+":"+strconv.FormatInt(last, 10)); err != nil {
		return fmt.Errorf("sweeping turn %s: %w", turnID, err)
	}
	db.log.Info("sweep: turn interrupted", "turn", turnID, "events", len(rows), "seq", last)
	return nil
}

// loadState rebuilds a turn's state from its stored snapshot and the
// events logged after it, and returns it with the seq of its last event.
// lock locks the message row (a sweep rewrites it).
func (db *DB) loadState(ctx context.Context, q querier, turnID, msgID string, lock bool) (*turnstate.State, int64, error) {
	var content string
	var seq int64
	forUpdate := ""
	if lock {
		forUpdate = " for update"
	}
	if err := q.QueryRow(ctx, `select content, seq from messages where id = $1`+forUpdate, msgID).Scan(&content, &seq); err != nil {
		return nil, 0, err
	}
	calls, err := toolCalls(ctx, q, turnID)
	if err != nil {
		return nil, 0, err
	}
	todos, err := todosOf(ctx, q, turnID)
	if err != nil {
		return nil, 0, err
	}
	st, err := turnstate.FromSnapshot(toolmark.SnapshotData{Content: content, Seq: seq, Status: toolmark.TurnRunning, ToolCalls: calls, Todos: todos})
	if err != nil {
		// A snapshot that does not parse cannot be rebuilt; keep the
		// turn's text but no live tags.
		db.log.Error("stored content does not parse", "turn", turnID, "err", err)
		st = turnstate.New()
	}
	st.StatusText = statustext.Text
	events, err := db.eventsAfter(ctx, q, turnID, seq, 1<<30)
	if err != nil {
		return nil, 0, err
	}
	last := seq
	for _, e := range events {
		if err := st.ApplyEvent(e); err != nil {
			db.log.Warn("skipping an event that does not apply", "turn", turnID, "seq", e.Seq, "err", err)
		}
		last = max(last, e.Seq)
	}
	return st, last, nil
}

// insertEvents inserts a turn's events with the seqs they carry.
func insertEvents(ctx context.Context, q querier, turnID string, rows []EventRow) error {
	seqs, types, datas, times := make([]int64, len(rows)), make([]string, len(rows)), make([]string, len(rows)), make([]time.Time, len(rows))
	for i, r := range rows {
		seqs[i], types[i], datas[i], times[i] = r.Seq, string(r.Type), string(r.Data), r.Time
	}
	rs, err := q.Query(ctx, `
		insert into events (turn_id, seq, type, data, time)
		select $1, u.seq, u.type, u.data::json, u.time from unnest($2::bigint[], $3::text[], $4::text[], $5::timestamptz[]) as u(seq, type, data, time)`,
		turnID, seqs, types, datas, times)
	if err != nil {
		return err
	}
	rs.Close()
	return rs.Err()
}

// AdoptedTurn is a turn that Adopt handed to a new owner.
type AdoptedTurn struct {
	Turn     toolmark.Turn
	OwnerID  string // the user who owns the conversation
	UserText string
	// State is, for a running turn handed over by a draining replica, the
	// answer as its events left it, and Seq the seq of its last event;
	// nil for a queued turn.
	State *turnstate.State
	Seq   int64
}

// Adopt gives owner the lease of up to limit turns that their replica
// will not run, oldest first, and returns them so that owner runs them:
// queued turns whose owner is gone (it died between creating a turn and
// running it, or handed it back while draining), and running turns that a
// draining replica handed over (no lease owner, hand-over time not run out)
// with the state their events left, to be continued.
//
// byLiveness is as for SweepExpired.
func (db *DB) Adopt(ctx context.Context, owner string, ttl time.Duration, limit int, byLiveness bool) ([]AdoptedTurn, error) {
	rows, err := db.pool.Query(ctx, `
		with `+liveOwners+`, a as (
			select t.id from turns t
			where (t.status = 'queued' and `+ownerGone("now()", "$4", "$1")+`)
			   or (t.status = 'running' and t.lease_owner is null and t.lease_expires_at >= now())
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
		if a.State, a.Seq, err = db.loadState(ctx, db.pool, a.Turn.ID, a.Turn.AssistantMessageID, false); err != nil {
			return out[:i], fmt.Errorf("adopting turn %s: %w", a.Turn.ID, err)
		}
		a.Turn.LastSeq = a.Seq
	}
	return out, nil
}

// OtherReplicas returns how many replicas other than owner are alive (hold
// their liveness lock) on this database.
func (db *DB) OtherReplicas(ctx context.Context, owner string) (int, error) {
	var n int
	err := db.pool.QueryRow(ctx, `
		with `+liveOwners+`
		select count(*) from live where objid <> hashtext($1)::oid`, owner).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("counting replicas: %w", err)
	}
	return n, nil
}

// Recovering reports whether a turn is not final and no live replica runs
// it: its owner died (no liveness lock, or its lease expired) or handed it
// over, and a sweep or an adoption is about to take it.
func (db *DB) Recovering(ctx context.Context, turnID string) (bool, error) {
	if !validID(turnID) {
		return false, notFound("turn")
	}
	var r bool
	err := db.pool.QueryRow(ctx, `
		with `+liveOwners+`
		select t.status in ('queued', 'running') and `+ownerGone("now()", "true", "''")+`
		from turns t where t.id = $1`, turnID).Scan(&r)
	if err != nil {
		return false, dbErr("reading turn", "turn", err)
	}
	return r, nil
}
