package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/tern/v2/migrate"

	"github.com/toolmark/toolmark"
	sqlfiles "github.com/toolmark/toolmark/sql"
)

// DefaultMaxContentBytes is the default limit on the size of a message's
// content (WithMaxContentBytes).
const DefaultMaxContentBytes = 8 << 20

// versionTable is tern's table recording the schema version.
const versionTable = "public.schema_version"

// DB is toolmark's PostgreSQL store. It is safe for concurrent use.
type DB struct {
	pool    *pgxpool.Pool
	commits *pgxpool.Pool // Commit's own connections: group commits never queue behind requests
	// testHookBatch, set by tests, sees every commit's batch before it is
	// sent (to fail it between two statements).
	testHookBatch func(b *pgx.Batch)
	log           *slog.Logger
	maxContent    int
	maxConns      int32
	warm          bool
	tracer        pgx.QueryTracer
	// searches admits knowledge-base searches (see SearchDocuments).
	searches chan struct{}
	// docs holds the documents searches found (see docCache).
	docs docCache
	// livenessSince is when ListenAs took this process's liveness lock
	// (unix nanoseconds), 0 while it does not hold it.
	livenessSince atomic.Int64
	// quiet, set by SetAnnounce(false), leaves ChannelEvents out of
	// Commit: no other replica is there to hear it.
	quiet atomic.Bool
	// pooler is what Open was told of the URL (WithPooler), directURL the
	// direct URL given (WithDirectURL); pooled is what Open found, and
	// session the configuration of connections with a session of their
	// own (nil: none, see Sessions).
	pooler    Pooler
	directURL string
	pooled    bool
	session   *pgx.ConnConfig
}

// DefaultMaxConns is the default size of the connection pool: twice this
// machine's processors, at least 4. Turns do not hold connections while
// they run (one group commit writes for all of them, on connections of its
// own, and followers read from memory), so the pool serves requests and
// tools, not turns.
//
// It is small on purpose. Every connection is a PostgreSQL process, and a
// database with more busy processes than processors does not go faster: it
// shares its processors among them, the group commit's among the rest.
// With 16 connections on 2 processors, the knowledge-base searches of 50
// turns that started together ran all at once, and a group commit of a few
// events then took up to 45 ms, waiting for a processor. With fewer
// connections the work waits for a connection instead, in the server,
// where the group commit (on its own connections) does not queue behind
// it. When PostgreSQL runs on a machine of its own, set pool_max_conns in
// the URL to about twice its processors.
func DefaultMaxConns() int32 { return int32(max(4, 2*runtime.GOMAXPROCS(0))) }

// searchSlots is how many knowledge-base searches run at once on a pool
// of maxConns connections: a quarter of them, at least one; the others
// wait in the server. Searches are the heaviest statements a turn makes
// (ts_headline parses each hit's text), and the turns that started
// together reach their tools together. With 50 such turns on 2 processors
// and 16 connections, their 100 searches ran at once and the live
// delivery p99 was 39–46 ms; with 4 connections 17–50 ms; with 4 and one
// search at a time 7–18 ms (`toolmark bench --turns 50`). A turn waits a
// few milliseconds longer for its tool's result, which no follower waits
// for in the meantime.
func searchSlots(maxConns int32) int { return max(1, int(maxConns)/4) }

// WithMaxConns sets the size of the connection pool (default
// DefaultMaxConns(), or pool_max_conns in the URL).
func WithMaxConns(n int) Option {
	return func(db *DB) {
		if n > 0 {
			db.maxConns = int32(n)
		}
	}
}

// WithWarmPool keeps the pool's connections open from the start (or
// pool_min_conns of the URL) and warms every new connection's catalog
// caches before its first use (see warmSQL): what a server wants, so that
// a burst of turns does not wait for cold connections. Tests, which open
// many small databases, leave it out.
func WithWarmPool() Option {
	return func(db *DB) { db.warm = true }
}

// Option configures Open.
type Option func(*DB)

// WithMaxContentBytes sets the largest message content, in bytes, that the
// store accepts (user messages, saved and rewritten assistant content);
// larger content is refused with ETOOLARGE. The default is 8 MiB.
func WithMaxContentBytes(n int) Option {
	return func(db *DB) {
		if n > 0 {
			db.maxContent = n
		}
	}
}

// WithTracer traces every query of the store's connections (tests count
// the queries of a request with one).
func WithTracer(t pgx.QueryTracer) Option {
	return func(db *DB) { db.tracer = t }
}

// WithLogger sets the logger; the default is slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(db *DB) {
		if l != nil {
			db.log = l
		}
	}
}

// Open connects to the PostgreSQL server at databaseURL and pings it. It does
// not migrate the schema; call Migrate for that.
func Open(ctx context.Context, databaseURL string, opts ...Option) (*DB, error) {
	db := &DB{log: slog.Default(), maxContent: DefaultMaxContentBytes}
	for _, o := range opts {
		o(db)
	}
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("parsing database url: %w", err)
	}
	if db.tracer != nil {
		cfg.ConnConfig.Tracer = db.tracer
	}
	switch {
	case db.maxConns > 0:
		cfg.MaxConns = db.maxConns
	case !strings.Contains(databaseURL, "pool_max_conns"):
		cfg.MaxConns = DefaultMaxConns()
	}
	if err := db.configurePooler(ctx, cfg, databaseURL); err != nil {
		return nil, err
	}
	// Connections kept open and warmed before a burst needs them: a new
	// backend loads the catalog entries of every table, index and text
	// search dictionary its first statements touch, and planning those
	// statements cold cost about ten times more than warm (11 ms for the
	// history read on a slow machine), on the path of a turn's first event.
	if db.warm {
		if !strings.Contains(databaseURL, "pool_min_conns") {
			cfg.MinConns = cfg.MaxConns
		}
		cfg.AfterConnect = warmUp
	}
	db.searches = make(chan struct{}, searchSlots(cfg.MaxConns))
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connecting to postgres: %w", err)
	}
	wcfg := cfg.Copy()
	wcfg.MaxConns, wcfg.MinConns = 2, 1
	// The group commit's statements are prepared once per connection and
	// their plans do not depend on the statistics or on the arrays'
	// lengths (TestGenericPlansUseKeys checks them on a new database), so
	// they are planned once. Left to choose, PostgreSQL kept planning them
	// again on every execution: a custom plan, which counts the arrays'
	// elements, looks cheaper than the generic one, which guesses, and
	// planning cost more than running the statements. Through a pooler
	// nothing is prepared, and there is no plan to keep.
	if _, set := wcfg.ConnConfig.RuntimeParams["plan_cache_mode"]; !set && !db.pooled {
		wcfg.ConnConfig.RuntimeParams = maps.Clone(wcfg.ConnConfig.RuntimeParams)
		wcfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	}
	commits, err := pgxpool.NewWithConfig(ctx, wcfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("connecting to postgres: %w", err)
	}
	db.pool, db.commits = pool, commits
	return db, nil
}

// configurePooler finds out whether cfg goes through a pooler (unless
// told, WithPooler) and sets the connections up for it: through a pooler,
// statements that prepare nothing and no start-up setting; directly, the
// settings below. It also sets up the connections with a session of their
// own (the direct URL's, else cfg's when it is not pooled).
func (db *DB) configurePooler(ctx context.Context, cfg *pgxpool.Config, databaseURL string) error {
	db.pooled = db.pooler == PoolerTransaction
	if db.pooler == PoolerDetect {
		pooled, err := detectPooler(ctx, cfg.ConnConfig)
		if err != nil {
			return fmt.Errorf("connecting to postgres: %w", err)
		}
		db.pooled = pooled
	}
	if db.pooled {
		if !strings.Contains(databaseURL, "default_query_exec_mode") {
			cfg.ConnConfig.DefaultQueryExecMode = pooledExecMode
		}
	} else if _, set := cfg.ConnConfig.RuntimeParams["enable_seqscan"]; !set {
		// Plans that do not depend on table statistics: every statement
		// of the store finds its rows through an index (a primary key, a
		// turn's or a conversation's index), and a table scan is never
		// the plan meant. A new database's tables are small, so the
		// planner would pick scans — and a generic plan cached then kept
		// scanning every turn for every event long after the tables grew
		// (a group commit of 500 events took 250 ms instead of 10). With
		// scans priced out, the plans stay on the indexes whatever the
		// statistics say, and PostgreSQL may keep generic plans instead
		// of planning each statement again (planning cost more than
		// executing the commit's statements). Through a pooler nothing
		// is prepared: every statement is planned with the statistics of
		// the moment, and no plan outlives them.
		cfg.ConnConfig.RuntimeParams["enable_seqscan"] = "off"
	}
	switch {
	case db.directURL != "":
		dc, err := pgx.ParseConfig(db.directURL)
		if err != nil {
			return fmt.Errorf("parsing the direct database url: %w", err)
		}
		dc.Tracer = cfg.ConnConfig.Tracer
		db.session = dc
	case !db.pooled:
		db.session = cfg.ConnConfig.Copy()
	}
	return nil
}

// warmSQL plans, without running them, statements over every table and
// index the server uses, and loads the English text search dictionary, so
// that a new connection's first real statements find the catalog caches
// warm.
const warmSQL = `
	explain select 1 from turns t join messages m on m.id = t.user_message_id where t.id = '' and t.conversation_id = '' and t.finished_at is null;
	explain select 1 from messages where conversation_id = '' and replaced_by is null order by pos;
	explain select 1 from conversations where id = '' and owner_id = '' order by updated_at;
	explain select 1 from events where turn = 0 and seq > 0;
	explain select 1 from tool_calls where turn_id = any('{}');
	explain select 1 from todos where turn_id = '';
	explain select 1 from users u join api_tokens a on a.user_id = u.id where u.name = '';
	select ts_headline('english', 'warm', q), ts_rank_cd(to_tsvector('english', 'warm'), q)
		from websearch_to_tsquery('english', 'warm') q;
	explain select 1 from documents d where d.search @@ websearch_to_tsquery('english', 'warm');`

// warmUp warms a new connection's catalog caches (warmSQL). Before the
// schema exists it does nothing: the connection is fine all the same.
func warmUp(ctx context.Context, conn *pgx.Conn) error {
	_, _ = conn.Exec(ctx, warmSQL)
	return nil
}

// WarmIdle warms the connections the pool holds idle (those opened before
// the migrations made the schema).
func (db *DB) WarmIdle(ctx context.Context) {
	for _, c := range append(db.pool.AcquireAllIdle(ctx), db.commits.AcquireAllIdle(ctx)...) {
		_ = warmUp(ctx, c.Conn())
		c.Release()
	}
}

// Close closes every connection of the pools.
func (db *DB) Close() {
	db.pool.Close()
	db.commits.Close()
}

// Pool returns the underlying connection pool.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// MaxContentBytes returns the content size limit in force.
func (db *DB) MaxContentBytes() int { return db.maxContent }

// Migrate applies the embedded migrations that the database lacks. tern
// holds a PostgreSQL advisory lock while it migrates, so concurrent callers
// on several replicas apply each migration once; calling it on a current
// schema does nothing.
//
// The lock is a session's: Migrate runs on a connection of its own with a
// session (the direct URL's, see Sessions). Without one, it runs every
// migration in one transaction, which keeps one server connection of the
// pooler from the lock to its release.
func (db *DB) Migrate(ctx context.Context) error {
	if db.session != nil {
		conn, err := db.sessionConn(ctx)
		if err != nil {
			return fmt.Errorf("migrating: %w", err)
		}
		defer conn.Close(context.Background())
		return db.migrate(ctx, conn, false)
	}
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	defer conn.Release()
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		// tern's own lock comes after its first statement, which creates
		// its table: two replicas would deadlock there in their
		// transactions. This lock comes first.
		if _, err := tx.Exec(ctx, `select pg_advisory_xact_lock(hashtext('toolmark migrations'))`); err != nil {
			return fmt.Errorf("migrating: %w", err)
		}
		return db.migrate(ctx, tx.Conn(), true)
	})
}

// migrate runs tern on conn; inTx says conn is in a transaction that
// holds all the migrations.
func (db *DB) migrate(ctx context.Context, conn *pgx.Conn, inTx bool) error {
	m, err := migrate.NewMigratorEx(ctx, conn, versionTable, &migrate.MigratorOptions{DisableTx: inTx})
	if err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	if err := m.LoadMigrations(sqlfiles.Migrations); err != nil {
		return fmt.Errorf("loading migrations: %w", err)
	}
	m.OnStart = func(seq int32, name, _, _ string) {
		db.log.Info("applying migration", "sequence", seq, "name", name)
	}
	if err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	return nil
}

// SchemaVersion returns the number of the newest embedded migration: the
// version Migrate brings a database to.
func SchemaVersion() int {
	names, err := migrate.FindMigrations(sqlfiles.Migrations)
	if err != nil {
		return 0
	}
	return len(names)
}

// MigrationsHash returns a hex digest of the embedded migration files. Test
// helpers name template databases by it, so a changed schema gets a new
// template.
func MigrationsHash() string {
	h := sha256.New()
	names, _ := fs.Glob(sqlfiles.Migrations, "*.sql")
	sort.Strings(names)
	for _, n := range names {
		b, _ := fs.ReadFile(sqlfiles.Migrations, n)
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Ready returns nil when the server answers and the schema is at the
// version of the embedded migrations, and an EUNAVAILABLE error otherwise.
func (db *DB) Ready(ctx context.Context) error {
	var v int
	err := db.pool.QueryRow(ctx, "select version from "+versionTable).Scan(&v)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P01" {
			return toolmark.Errorf(toolmark.EUNAVAILABLE, "database schema is not migrated")
		}
		return &wrapped{toolmark.Errorf(toolmark.EUNAVAILABLE, "database unavailable"), fmt.Errorf("checking readiness: %w", err)}
	}
	if want := SchemaVersion(); v != want {
		return toolmark.Errorf(toolmark.EUNAVAILABLE, "database schema is at version %d, want %d", v, want)
	}
	return nil
}

// wrapped is a *toolmark.Error for the client that keeps the internal cause
// for logs and errors.Is.
type wrapped struct {
	e     *toolmark.Error
	cause error
}

// Error returns the internal cause's message, for logs.
func (w *wrapped) Error() string { return w.cause.Error() }

// Unwrap exposes both the client error and the cause to errors.Is and As.
func (w *wrapped) Unwrap() []error { return []error{w.e, w.cause} }

// notFound returns the ENOTFOUND error for a kind of object.
func notFound(kind string) error {
	return toolmark.Errorf(toolmark.ENOTFOUND, "%s not found", kind)
}

// dbErr maps PostgreSQL errors to toolmark codes and wraps the rest with
// context: no rows → ENOTFOUND for kind, unique violation → ECONFLICT,
// foreign-key violation → ENOTFOUND, invalid text or JSON → EINVALID, an
// unreachable database (Unavailable) → EUNAVAILABLE.
func dbErr(context, kind string, err error) error {
	if err == nil {
		return nil
	}
	var te *toolmark.Error
	if errors.As(err, &te) {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound(kind)
	}
	if Unavailable(err) {
		return &wrapped{ErrUnavailable, fmt.Errorf("%s: %w", context, err)}
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505": // unique_violation
			return &wrapped{toolmark.Errorf(toolmark.ECONFLICT, "%s already exists", kind), fmt.Errorf("%s: %w", context, err)}
		case "23503": // foreign_key_violation
			return &wrapped{notFound(kind).(*toolmark.Error), fmt.Errorf("%s: %w", context, err)}
		case "22021", "22P02", "22P05", "22025", "22032": // bad encoding, invalid text/JSON representation
			return &wrapped{toolmark.Errorf(toolmark.EINVALID, "invalid %s", kind), fmt.Errorf("%s: %w", context, err)}
		}
	}
	return fmt.Errorf("%s: %w", context, err)
}

// checkText validates a text field: valid UTF-8, no NUL byte, at most max
// bytes, and non-empty when required. It takes bytes (an event's JSON) as
// they are, without copying them into a string.
func checkText[T string | []byte](field string, s T, max int, required bool) error {
	if len(s) > max {
		return toolmark.Errorf(toolmark.ETOOLARGE, "%s is larger than %d bytes", field, max)
	}
	var empty, valid bool
	var nul int
	switch v := any(s).(type) {
	case string:
		empty, valid, nul = strings.TrimSpace(v) == "", utf8.ValidString(v), strings.IndexByte(v, 0)
	case []byte:
		empty, valid, nul = len(bytes.TrimSpace(v)) == 0, utf8.Valid(v), bytes.IndexByte(v, 0)
	}
	switch {
	case required && empty:
		return toolmark.Errorf(toolmark.EINVALID, "%s is empty", field)
	case !valid:
		return toolmark.Errorf(toolmark.EINVALID, "%s is not valid UTF-8", field)
	case nul >= 0:
		return toolmark.Errorf(toolmark.EINVALID, "%s contains a NUL byte", field)
	}
	return nil
}

// validID reports whether id can be sent to PostgreSQL as text; an id that
// cannot is unknown by definition.
func validID(id string) bool {
	return id != "" && len(id) <= 200 && utf8.ValidString(id) && strings.IndexByte(id, 0) < 0
}

// beginFunc runs fn in a transaction, committing when it returns nil.
func (db *DB) beginFunc(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, db.pool, fn)
}
