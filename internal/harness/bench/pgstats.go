package bench

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pgSample is a moment of a PostgreSQL server's statistics.
type pgSample struct {
	// Xacts is xact_commit + xact_rollback of the database in
	// pg_stat_database. Backends publish these counts when they go idle,
	// up to about 10 s late (PostgreSQL's PGSTAT_IDLE_INTERVAL), or when
	// they exit.
	Xacts int64
	// XIDs is the next transaction id: the number of transactions that
	// wrote something, in the whole cluster.
	XIDs int64
	// WAL is pg_current_wal_lsn() as a byte position, for the whole
	// cluster.
	WAL int64
	// CPU is the PostgreSQL server's CPU time (postmaster and backends),
	// when it runs on this machine; 0 otherwise.
	CPU time.Duration
}

// pgDelta is what PostgreSQL did between two samples.
type pgDelta struct {
	Xacts    int64
	XIDs     int64
	WALBytes int64
	CPU      time.Duration
}

// pgStats reads a PostgreSQL server's statistics for one database.
type pgStats struct {
	url        string
	postmaster int // pid of the local postmaster, 0 when not local
}

// openPGStats checks that url is reachable and finds the server's
// postmaster when it runs on this machine (the parent of our own backend).
func openPGStats(ctx context.Context, dbURL string) (*pgStats, error) {
	p := &pgStats{url: dbURL}
	conn, err := p.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var backend int
	if err := conn.QueryRow(ctx, "select pg_backend_pid()").Scan(&backend); err != nil {
		return nil, fmt.Errorf("reading PostgreSQL's statistics: %w", err)
	}
	if isLocal(conn.Config().Host) {
		if pr, err := readProc(backend); err == nil && pr.PPID > 1 {
			p.postmaster = pr.PPID
		}
	}
	return p, nil
}

// isLocal reports whether a PostgreSQL host is on this machine: a unix
// socket directory or a loopback address.
func isLocal(host string) bool {
	if host == "" || host[0] == '/' || host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ownXacts is the number of transactions a sample makes itself: the
// backend's start-up and one simple-protocol query (the extended protocol
// would add one for preparing it). They are counted in the database's
// figures, a few per run.
const ownXacts = 2

// connect opens a connection of its own, with the simple protocol: for one
// reading of the statistics, or for writing the history (Config.History).
func (p *pgStats) connect(ctx context.Context) (*pgx.Conn, error) {
	// The server's URL may carry its pool's settings (pool_max_conns),
	// which a single connection refuses: pgxpool takes them out.
	pcfg, err := pgxpool.ParseConfig(p.url)
	if err != nil {
		return nil, fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	cfg := pcfg.ConnConfig
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	return conn, nil
}

// sample reads the statistics on a connection of its own, closed at once
// so that its own transaction is published with the next sample.
func (p *pgStats) sample(ctx context.Context) (pgSample, error) {
	conn, err := p.connect(ctx)
	if err != nil {
		return pgSample{}, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var s pgSample
	err = conn.QueryRow(ctx, `select d.xact_commit + d.xact_rollback,
		pg_snapshot_xmax(pg_current_snapshot())::text::bigint,
		pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint
		from pg_stat_database d where d.datname = current_database()`).Scan(&s.Xacts, &s.XIDs, &s.WAL)
	if err != nil {
		return pgSample{}, fmt.Errorf("reading PostgreSQL's statistics: %w", err)
	}
	if p.postmaster > 0 {
		s.CPU, _ = procTree(p.postmaster)
	}
	return s, nil
}

// since returns what PostgreSQL did from a to s.
func (s pgSample) since(a pgSample) pgDelta {
	return pgDelta{Xacts: s.Xacts - a.Xacts, XIDs: s.XIDs - a.XIDs, WALBytes: s.WAL - a.WAL, CPU: s.CPU - a.CPU}
}

// databaseName returns the database a PostgreSQL URL names, for messages.
func databaseName(dbURL string) string {
	if u, err := url.Parse(dbURL); err == nil && len(u.Path) > 1 {
		return u.Path[1:]
	}
	return ""
}
