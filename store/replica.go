package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Replicas without a session (see Sessions) show they are alive with a
// row of replica_leases instead of a liveness lock: renewed by Census, and
// deleted by DropReplicaLease when they stop. The liveness of the others
// (the CTE live of lease.go) is both: the locks held and the rows not
// expired, so replicas with and without a direct URL share one database.

// Census is what one look at the database tells a replica (see
// TakeCensus).
type Census struct {
	// Others is the number of other replicas alive.
	Others int
	// Active is the number of turns not finished that are not the
	// caller's own running ones: turns whose replica may die, for the
	// caller to take over.
	Active int
	// Orphans says that some turn waits for the caller: a running turn
	// whose owner is gone (SweepExpired), a queued one whose owner is gone
	// or one handed over (Adopt).
	Orphans bool
}

// censusQuery counts the other live replicas and the active turns, tells
// whether any is an orphan and, with $6, renews the caller's replica lease
// for $5: one statement, so that an idle replica's look at the database
// costs one transaction. $1 is the time to compare expiries with, $2
// whether to trust the liveness of the others, $3 the caller, $4 the turns
// it runs.
var censusQuery = `
	with ` + liveOwners + `, renew as (
		insert into replica_leases (owner, expires_at) select $3, now() + $5::interval where $6
		on conflict (owner) do update set expires_at = excluded.expires_at
		returning 1
	), active as materialized (
		select t.id, t.status, t.lease_owner, t.lease_expires_at from turns t
		where t.finished_at is null and not (t.lease_owner = $3 and t.id = any($4))
	)
	select (select count(*) from live where objid <> hashtext($3)::oid),
		(select count(*) from active),
		exists (select 1 from active t where
			(t.status = 'running' and ` + runningGone + `)
			or (t.status = 'queued' and ` + ownerGone("$1", "$2", "$3") + `)
			or (t.status = 'running' and t.lease_owner is null and t.lease_expires_at >= $1)),
		(select count(*) from renew)`

// TakeCensus counts the other live replicas and the active turns and
// tells whether some turn waits for self (see Census), in one statement.
// now, byLiveness and running are as for SweepExpired. A ttl above zero
// also renews self's replica lease for ttl (a replica without a session).
func (db *DB) TakeCensus(ctx context.Context, now time.Time, self string, byLiveness bool, running []string, ttl time.Duration) (Census, error) {
	var c Census
	var renewed int
	if running == nil {
		running = []string{}
	}
	err := db.commits.QueryRow(ctx, censusQuery, now, byLiveness, self, running, max(ttl, 0), ttl > 0).
		Scan(&c.Others, &c.Active, &c.Orphans, &renewed)
	if err != nil {
		if ttl > 0 {
			db.livenessSince.Store(0)
		}
		return c, fmt.Errorf("taking the census: %w", err)
	}
	if ttl > 0 && renewed > 0 {
		db.livenessSince.CompareAndSwap(0, time.Now().UnixNano())
	}
	return c, nil
}

// DropReplicaLease deletes owner's replica lease: the others count it gone
// at once.
func (db *DB) DropReplicaLease(ctx context.Context, owner string) error {
	if _, err := db.commits.Exec(ctx, `delete from replica_leases where owner = $1`, owner); err != nil {
		return fmt.Errorf("dropping the replica lease: %w", err)
	}
	db.livenessSince.Store(0)
	return nil
}

// TurnProgress is what Poll reads of a turn: the seq of its last logged
// event and whether its cancellation was requested.
type TurnProgress struct {
	LastSeq int64
	Cancel  bool
}

// Poll reads, for a replica that cannot listen for notifications, the
// progress of the turns ids in one statement: the seq of their last event
// (for their followers here) and their cancel requests (for those it
// runs). A turn not found is left out.
func (db *DB) Poll(ctx context.Context, ids []string) (map[string]TurnProgress, error) {
	rows, err := db.commits.Query(ctx, `
		select t.id, greatest(t.last_seq, coalesce((select max(e.seq) from events e where e.turn = t.num), 0)), t.cancel_requested
		from turns t where t.id = any($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("polling turns: %w", err)
	}
	defer rows.Close()
	out := make(map[string]TurnProgress, len(ids))
	for rows.Next() {
		var id string
		var p TurnProgress
		if err := rows.Scan(&id, &p.LastSeq, &p.Cancel); err != nil {
			return nil, fmt.Errorf("polling turns: %w", err)
		}
		out[id] = p
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("polling turns: %w", err)
	}
	return out, nil
}

// ActiveTurns returns the turn being answered (queued or running) in each
// of the conversations that has one, by conversation id: what a replica
// without a session polls for its conversations' watchers instead of
// hearing ChannelTurns.
func (db *DB) ActiveTurns(ctx context.Context, conversationIDs []string) (map[string]string, error) {
	rows, err := db.commits.Query(ctx, `
		select conversation_id, id from turns
		where conversation_id = any($1) and status in ('queued', 'running')`, conversationIDs)
	if err != nil {
		return nil, fmt.Errorf("polling active turns: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (kv [2]string, err error) {
		err = row.Scan(&kv[0], &kv[1])
		return kv, err
	})
	if err != nil {
		return nil, fmt.Errorf("polling active turns: %w", err)
	}
	m := make(map[string]string, len(out))
	for _, kv := range out {
		m[kv[0]] = kv[1]
	}
	return m, nil
}
