// Package pgtest gives every test its own fresh, migrated PostgreSQL
// database in tens of milliseconds, by cloning a template database that is
// migrated once (the approach of peterldowns/pgtestdb).
//
// The server is TEST_DATABASE_URL when set; otherwise one embedded server
// (package embeddedpg, fsync off) is started per test binary in a temporary
// directory. A package's TestMain should call Main, which stops that server
// and removes its directory when the tests end; without Main the server
// still dies with the test binary (it gets SIGINT when its parent exits) but
// its directory is left in os.TempDir.
//
// The template is named after a hash of the migration files and created
// under an advisory lock, so test binaries running in parallel against one
// server share it and a changed schema gets a new one. When no server can be
// had, New skips the test, except under CI=true where it fails it.
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		db := pgtest.New(t) // a *store.DB on a fresh migrated database
//		…
//	}
package pgtest

import (
	"context"
	"hash/fnv"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark/internal/embeddedpg"
	"github.com/toolmark/toolmark/internal/harness/pgadmin"
	"github.com/toolmark/toolmark/store"
)

var (
	setupOnce sync.Once
	serverURL string // admin URL of the server
	template  string // name of the migrated template database
	setupErr  error
	server    *embeddedpg.Server
	serverDir string
)

// Main runs the tests of a package and then stops the embedded server, if
// one was started, before exiting with the tests' exit code. Call it from
// TestMain.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the embedded server started for this test binary, if any, and
// removes its data directory. Main calls it.
func Stop() {
	stopBouncer()
	if server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = server.Stop(ctx)
		server = nil
	}
	if serverDir != "" {
		_ = os.RemoveAll(serverDir)
		serverDir = ""
	}
}

// URL returns the connection URL of a fresh database cloned from the
// migrated template; the database is dropped when the test ends.
func URL(tb testing.TB) string {
	tb.Helper()
	setupOnce.Do(func() { setupErr = setup() })
	if setupErr != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("pgtest: no PostgreSQL server for the tests: %v", setupErr)
		}
		tb.Skipf("pgtest: no PostgreSQL server for the tests (set TEST_DATABASE_URL or install PostgreSQL): %v", setupErr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := pgadmin.RandomName("test_")
	u, err := pgadmin.Create(ctx, serverURL, name, template)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := pgadmin.Drop(ctx, serverURL, name); err != nil {
			tb.Errorf("pgtest: %v", err)
		}
	})
	return u
}

// New returns a store on a fresh, migrated database of its own, closed and
// dropped when the test ends. Options are passed to store.Open.
func New(tb testing.TB, opts ...store.Option) *store.DB {
	tb.Helper()
	return Open(tb, URL(tb), opts...)
}

// Open returns a store on the database at u (from URL), closed when the
// test ends: several stores on one database are several replicas. Options
// are passed to store.Open, after a logger that discards.
func Open(tb testing.TB, u string, opts ...store.Option) *store.DB {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts = append([]store.Option{store.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}, opts...)
	db, err := store.Open(ctx, u, opts...)
	if err != nil {
		tb.Fatalf("pgtest: opening test database: %v", err)
	}
	tb.Cleanup(db.Close) // registered after URL's drop, so it runs first
	return db
}

// HoldPool takes every connection of db's pool until the test ends, as
// requests and tools that hold them all do.
func HoldPool(tb testing.TB, db *store.DB) {
	tb.Helper()
	for range db.Pool().Config().MaxConns {
		conn, err := db.Pool().Acquire(context.Background())
		if err != nil {
			tb.Fatalf("pgtest: holding the pool: %v", err)
		}
		tb.Cleanup(conn.Release)
	}
}

func setup() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		serverURL = u
	} else {
		dir, err := os.MkdirTemp("", "toolmark-pgtest-")
		if err != nil {
			return err
		}
		// When the tests run as root postgres runs as another user, which
		// must be able to enter the directory.
		if err := os.Chmod(dir, 0o711); err != nil {
			return err
		}
		serverDir = dir
		server, err = embeddedpg.Start(ctx, embeddedpg.Config{
			DataDir:  filepath.Join(dir, "pgdata"),
			Database: "postgres",
			NoSync:   true,
			Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			_ = os.RemoveAll(dir)
			serverDir = ""
			return err
		}
		serverURL = server.URL()
	}
	template = "toolmark_tmpl_" + store.MigrationsHash()[:16]
	return ensureTemplate(ctx)
}

// ensureTemplate creates and migrates the template database unless it
// exists, under an advisory lock shared by every test binary using the
// server.
func ensureTemplate(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	h := fnv.New64a()
	h.Write([]byte("toolmark pgtest template"))
	lock := int64(h.Sum64())
	if _, err := conn.Exec(ctx, "select pg_advisory_lock($1)", lock); err != nil {
		return err
	}
	defer conn.Exec(context.Background(), "select pg_advisory_unlock($1)", lock)

	var ready bool
	err = conn.QueryRow(ctx, "select exists (select 1 from pg_database where datname = $1 and datistemplate)", template).Scan(&ready)
	if err != nil || ready {
		return err
	}
	ident := pgx.Identifier{template}.Sanitize()
	if _, err := conn.Exec(ctx, "drop database if exists "+ident+" with (force)"); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "create database "+ident); err != nil {
		return err
	}
	db, err := store.Open(ctx, pgadmin.WithDatabase(serverURL, template), store.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		return err
	}
	err = db.Migrate(ctx)
	db.Close()
	if err != nil {
		return err
	}
	_, err = conn.Exec(ctx, "alter database "+ident+" is_template true allow_connections false")
	return err
}
