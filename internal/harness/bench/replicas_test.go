package bench_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark/internal/harness/bench"
	"github.com/toolmark/toolmark/internal/harness/pgbouncer"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// TestBenchReplicas runs three replicas behind PgBouncer with no direct
// URL, each turn's followers on the other two: every event crosses
// replicas through PostgreSQL (by polling, without a session), none is
// lost or repeated, and the report names the replicas and sums their
// costs.
func TestBenchReplicas(t *testing.T) {
	bin := testserver.Binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b, err := bench.Open(ctx, bench.Config{Command: []string{bin, "serve"}, DatabaseURL: pgtest.URL(t),
		Demo: bench.Demo{Delay: time.Millisecond, Tools: 2}, Replicas: 3, Pooler: bench.PoolerOnly, ServerLog: logTo(t)})
	if errors.Is(err, pgbouncer.ErrNotInstalled) && os.Getenv("CI") != "true" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	r, err := b.Run(ctx, bench.Load{Turns: 3, Followers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if p := r.Problems(); len(p) > 0 {
		t.Fatalf("problems: %v (errors %v)", p, r.Errors)
	}
	if r.Completed != 3 || r.Streams != 6 || r.Gaps != 0 || r.Duplicates != 0 {
		t.Errorf("completed %d, streams %d, gaps %d, duplicates %d; want 3, 6, 0, 0", r.Completed, r.Streams, r.Gaps, r.Duplicates)
	}
	if r.Replicas != 3 || r.Pooler != bench.PoolerOnly {
		t.Errorf("replicas %d, pooler %q; want 3, %q", r.Replicas, r.Pooler, bench.PoolerOnly)
	}
	if c := r.ServerCost; c == nil || c.CPU <= 0 || c.RSS <= 0 {
		t.Errorf("server cost %+v: want the replicas' CPU and memory", c)
	}
	if r.Stages != nil {
		t.Errorf("stages %+v: one replica's of three, want none", r.Stages)
	}
}

// TestBenchRunningReplicas measures two running servers on one database,
// given as --server URL,URL: turns go to both, followers to the other.
func TestBenchRunningReplicas(t *testing.T) {
	bin := testserver.Binary(t)
	dbURL := pgtest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var urls []string
	for range 2 {
		srv, err := bench.StartServer(ctx, bench.ServerConfig{Command: []string{bin, "serve"}, DatabaseURL: dbURL,
			Demo: bench.Demo{Delay: time.Millisecond, Tools: 2}, Log: logTo(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Stop() })
		urls = append(urls, srv.URL)
	}
	b := open(t, bench.Config{Server: strings.Join(urls, ",")})
	r, err := b.Run(ctx, bench.Load{Turns: 4, Followers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Completed != 4 || r.Gaps != 0 || r.Duplicates != 0 || r.Replicas != 2 {
		t.Errorf("completed %d, gaps %d, duplicates %d, replicas %d; want 4, 0, 0, 2", r.Completed, r.Gaps, r.Duplicates, r.Replicas)
	}
}
