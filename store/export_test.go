package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/tern/v2/migrate"

	"github.com/toolmark/toolmark"
	sqlfiles "github.com/toolmark/toolmark/sql"
)

// Test hooks: the runner takes a lease when it creates or adopts a turn;
// tests set one directly (an owner that died, a lease about to expire).

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

// FailCommitsAt makes every later commit of db fail after its statement k
// (0: before the first), by an erroring statement put there; k < 0 stops
// it.
func (db *DB) FailCommitsAt(k int) {
	if k < 0 {
		db.testHookBatch = nil
		return
	}
	db.testHookBatch = func(b *pgx.Batch) {
		k := min(k, len(b.QueuedQueries))
		fail := &pgx.QueuedQuery{SQL: "select 1/0"}
		b.QueuedQueries = append(b.QueuedQueries[:k], append([]*pgx.QueuedQuery{fail}, b.QueuedQueries[k:]...)...)
	}
}

// RecordCommits makes db hand every later commit's statements to fn before
// they run; nil stops it.
func (db *DB) RecordCommits(fn func(sql string)) {
	if fn == nil {
		db.testHookBatch = nil
		return
	}
	db.testHookBatch = func(b *pgx.Batch) {
		for _, q := range b.QueuedQueries {
			fn(q.SQL)
		}
	}
}

// HistoryQuery is the statement that reads a conversation's history.
const HistoryQuery = historyQuery

// RenewLeasesQuery is the statement that renews a replica's leases.
var RenewLeasesQuery = renewLeasesQuery

// WarmSQL is what a new connection runs to warm its catalog caches.
const WarmSQL = warmSQL

// MigrateTo migrates the schema to version v (a test of a migration starts
// from the version before it).
func (db *DB) MigrateTo(ctx context.Context, v int32) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	m, err := migrate.NewMigrator(ctx, conn.Conn(), versionTable)
	if err != nil {
		return err
	}
	if err := m.LoadMigrations(sqlfiles.Migrations); err != nil {
		return err
	}
	return m.MigrateTo(ctx, v)
}

// EventTypeCode is the number the events table stores for an event type.
func EventTypeCode(t toolmark.EventType) int16 {
	code, err := eventTypeCode(t)
	if err != nil {
		panic(err)
	}
	return code
}

// EventsInRow is, in SQL over the events table (alias e), how many events a
// row holds (a row holds the events of a turn that one commit wrote).
var EventsInRow = eventsInRow

// EventsGuardSQL is the guard a commit that copies its events runs alone.
var EventsGuardSQL = eventsGuardSQL

// DocumentBodiesRead returns how many document bodies searches read from
// the database.
func (db *DB) DocumentBodiesRead() int {
	db.docs.mu.Lock()
	defer db.docs.mu.Unlock()
	return db.docs.puts
}
