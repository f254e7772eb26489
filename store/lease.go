package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark"
)

// renewLeasesQuery extends the leases ($2) of the turns $3 that owner $1
// holds and returns them with their cancel requests.
var renewLeasesQuery = `
	with r as (
		select t.id from turns t where t.id = any($3) and ` + leasedOwner("t") + ` = $1
		for no key update skip locked
	), u as (
		update turns t set lease_expires_at = now() + $2::interval from r where t.id = r.id
	)
	select t.id, t.cancel_requested from turns t where t.id = any($3) and ` + leasedOwner("t") + ` = $1`

// RenewLeases extends to ttl from now the lease of the turns ids that owner
// holds and that are queued or running, in one statement (a turn whose row
// a group commit holds at that moment is renewed the next time), and
// returns the ids of those turns and of those among them whose
// cancellation was requested. A turn of ids that is not among them was
// taken over or finished elsewhere. Turns of owner that are not in ids (a
// turn the owner gave up on) are left to expire.
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
	// A row the group commit has locked (a turn starting or ending) is
	// skipped, not waited for: the renewal would otherwise lock its rows in
	// another order than the commit and deadlock with it, stalling every
	// turn for the deadlock timeout. Its lease is renewed the next time;
	// the turn is held all the same.
	//
	// It runs on the group commit's connections, which requests and tools
	// never hold: however busy the pool, the leases are renewed in time.
	rows, err := db.commits.Query(ctx, renewLeasesQuery, owner, ttl, ids)
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

// liveOwners is the CTE "live": the liveness locks held in this database,
// and the replica leases not expired of the replicas without a session
// (replica.go).
var liveOwners = `live as materialized (
	select l.objid from pg_locks l
	where l.locktype = 'advisory' and l.database = (select oid from pg_database where datname = current_database())
	  and l.classid = ` + strconv.Itoa(livenessClass) + ` and l.objsubid = 2 and l.granted
	union all
	select hashtext(r.owner)::oid from replica_leases r where r.expires_at >= now())`

// OtherReplicas returns how many replicas other than owner are alive (hold
// their liveness lock) on this database. It runs on the group commit's
// connections, which requests and tools never hold: a replica counts its
// peers every second, and drains by the count, however busy its pool.
func (db *DB) OtherReplicas(ctx context.Context, owner string) (int, error) {
	var n int
	err := db.commits.QueryRow(ctx, `
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
		select t.finished_at is null and `+ownerGone("now()", "true", "''")+`
		from turns t where t.id = $1`, turnID).Scan(&r)
	if err != nil {
		return false, dbErr("reading turn", "turn", err)
	}
	return r, nil
}
