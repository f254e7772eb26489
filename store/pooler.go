package store

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Poolers: DATABASE_URL may reach PostgreSQL through a pooler in
// transaction mode (PgBouncer, Supavisor, Neon's), which hands each
// transaction whatever server connection is free. What lives in a session
// does not survive there: prepared statements, LISTEN, session-level
// advisory locks, settings sent at start-up (PgBouncer refuses those it
// does not know). Open finds out whether the URL is pooled (or is told,
// WithPooler) and, if it is, uses no prepared statement and sends no
// start-up setting; what needs a session uses the direct URL
// (WithDirectURL), and without one the store has no session at all
// (Sessions), which the runner makes up for with lease rows and polling.

// Pooler says how the URL given to Open reaches PostgreSQL.
type Pooler int

const (
	// PoolerDetect finds out at Open (detectPooler). It is the default.
	PoolerDetect Pooler = iota
	// PoolerNone is a direct connection: one client connection, one session.
	PoolerNone
	// PoolerTransaction is a pooler in transaction mode.
	PoolerTransaction
)

// pooledExecMode is how statements run through a pooler: described once
// per connection with the unnamed statement, then parsed, bound and run in
// one round trip each time, all before the next Sync, so no statement
// outlives the transaction that the pooler gave a server connection to.
// It is the one of pgx's modes that works for the store through
// PgBouncer 1.18 (docs/storage.md): Exec and SimpleProtocol cannot encode
// its array parameters without their types, DescribeExec binds the
// unnamed statement it described on a server connection the pooler may
// have handed to another client since, and the named statements of the
// default mode collide.
const pooledExecMode = pgx.QueryExecModeCacheDescribe

// WithPooler says how the URL reaches PostgreSQL instead of finding out.
func WithPooler(p Pooler) Option {
	return func(db *DB) { db.pooler = p }
}

// WithDirectURL gives the URL of a direct connection to the same database,
// for what needs a session when the URL given to Open is pooled: LISTEN,
// the liveness lock (ListenAs) and migrations. Empty: the URL given to
// Open serves for these too when it is not pooled.
func WithDirectURL(u string) Option {
	return func(db *DB) { db.directURL = u }
}

// Pooled reports whether the URL given to Open goes through a pooler in
// transaction mode.
func (db *DB) Pooled() bool { return db.pooled }

// Sessions reports whether the store has a session of its own for
// ListenAs and migrations: a direct URL was given or the URL is not
// pooled. Without one, ListenAs fails and the runner keeps its liveness in
// ReplicaLease rows and polls instead of listening.
func (db *DB) Sessions() bool { return db.session != nil }

// DirectGiven reports whether a direct URL was given (WithDirectURL).
func (db *DB) DirectGiven() bool { return db.directURL != "" }

// detectPooler reports whether cfg reaches PostgreSQL through a pooler in
// transaction mode, without asking the pooler (SHOW pool_mode needs its
// admin console). PgBouncer refuses a start-up setting it does not know
// (which PostgreSQL takes): that settles it. Otherwise probe says.
func detectPooler(ctx context.Context, cfg *pgx.ConnConfig) (bool, error) {
	cfg = cfg.Copy()
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	probe := cfg.Copy()
	probe.RuntimeParams["enable_seqscan"] = "on"
	c, err := pgx.ConnectConfig(ctx, probe)
	if err == nil {
		c.Close(context.Background())
	} else if strings.Contains(err.Error(), "unsupported startup parameter") {
		return true, nil
	}
	for range probeRounds {
		pooled, err := probePooler(ctx, cfg)
		if err != nil || pooled {
			return pooled, err
		}
	}
	return false, nil
}

// probeRounds is how many times probePooler looks: a pooler busy with
// other clients may hand the probe's connections around so that one look
// sees nothing.
const probeRounds = 3

// probePooler reports whether a session-level setting made on one client
// connection is seen from another, or a client connection's backend
// changes while the other holds a transaction. Through a direct
// connection neither can happen. A pooler that hands out the connection
// freed last (PgBouncer's default) shows both at once, unless another
// client took that connection in between.
func probePooler(ctx context.Context, cfg *pgx.ConnConfig) (bool, error) {
	a, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false, err
	}
	defer a.Close(context.Background())
	b, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false, err
	}
	defer b.Close(context.Background())
	mark := rand.Text()
	var pidA, pidA2, pidB int32
	var seen string
	if err := a.QueryRow(ctx, `select pg_backend_pid(), set_config('toolmark.pooler_probe', $1, false)`, mark).Scan(&pidA, &seen); err != nil {
		return false, fmt.Errorf("probing for a pooler: %w", err)
	}
	tx, err := b.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("probing for a pooler: %w", err)
	}
	defer tx.Rollback(context.Background())
	if err := tx.QueryRow(ctx, `select pg_backend_pid(), coalesce(current_setting('toolmark.pooler_probe', true), '')`).Scan(&pidB, &seen); err != nil {
		return false, fmt.Errorf("probing for a pooler: %w", err)
	}
	if err := a.QueryRow(ctx, `select pg_backend_pid()`).Scan(&pidA2); err != nil {
		return false, fmt.Errorf("probing for a pooler: %w", err)
	}
	return seen == mark || pidB == pidA || pidA2 != pidA, nil
}

// sessionConn opens a connection with a session of its own (the direct
// URL's, or the pool's when it is not pooled).
func (db *DB) sessionConn(ctx context.Context) (*pgx.Conn, error) {
	if db.session == nil {
		return nil, errNoSession
	}
	return pgx.ConnectConfig(ctx, db.session.Copy())
}

// errNoSession is what needs a session fails with when the store has none
// (Sessions).
var errNoSession = fmt.Errorf("the database URL goes through a pooler in transaction mode and no direct URL was given")
