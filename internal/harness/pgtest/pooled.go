package pgtest

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/toolmark/toolmark/internal/harness/pgbouncer"
)

var (
	bouncerOnce sync.Once
	bouncer     *pgbouncer.Server
	bouncerErr  error
)

// Pooled returns u, the URL of a database on the test server (from URL),
// rewritten to go through PgBouncer in transaction mode: one PgBouncer per
// test binary, started on first use and stopped by Main. When PgBouncer is
// not installed the test is skipped, except under CI=true where it fails.
func Pooled(tb testing.TB, u string) string {
	tb.Helper()
	bouncerOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		bouncer, bouncerErr = pgbouncer.Start(ctx, pgbouncer.Config{Server: serverURL})
	})
	if bouncerErr != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("pgtest: no PgBouncer for the tests: %v", bouncerErr)
		}
		tb.Skipf("pgtest: no PgBouncer for the tests (install it: scripts/need-pgbouncer.sh): %v", bouncerErr)
	}
	p, err := bouncer.Pooled(u)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return p
}

// stopBouncer stops the PgBouncer that Pooled started, if any.
func stopBouncer() {
	if bouncer != nil {
		bouncer.Stop()
		bouncer = nil
	}
}
