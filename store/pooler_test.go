package store_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/pgadmin"
	"github.com/toolmark/toolmark/internal/harness/pgbouncer"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/store"
)

// TestPoolerDetected opens one database directly and through PgBouncer
// in transaction mode, without saying which is which.
func TestPoolerDetected(t *testing.T) {
	direct := pgtest.URL(t)
	pooled := pgtest.Pooled(t, direct)
	for _, tt := range []struct {
		name           string
		url            string
		opts           []store.Option
		pooled, sesses bool
	}{
		{"direct", direct, nil, false, true},
		{"pooled", pooled, nil, true, false},
		{"pooled with a direct url", pooled, []store.Option{store.WithDirectURL(direct)}, true, true},
		{"told it is direct", direct, []store.Option{store.WithPooler(store.PoolerNone)}, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := pgtest.Open(t, tt.url, tt.opts...)
			if db.Pooled() != tt.pooled || db.Sessions() != tt.sesses {
				t.Errorf("Pooled, Sessions = %v, %v; want %v, %v", db.Pooled(), db.Sessions(), tt.pooled, tt.sesses)
			}
			if _, err := db.ListenAs(t.Context(), newOwner("listener"), store.ChannelEvents); (err == nil) != tt.sesses {
				t.Errorf("ListenAs: %v; want an error only without a session", err)
			}
		})
	}
}

// TestPoolerProbed: a pooler that takes any start-up setting (PgBouncer
// told to ignore toolmark's) is found by the probe of sessions.
func TestPoolerProbed(t *testing.T) {
	direct := pgtest.URL(t)
	pb, err := pgbouncer.Start(t.Context(), pgbouncer.Config{Server: direct, Ignore: []string{"enable_seqscan", "plan_cache_mode"}})
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	t.Cleanup(pb.Stop)
	pooled, err := pb.Pooled(direct)
	if err != nil {
		t.Fatal(err)
	}
	// Other clients keep the pooler busy meanwhile.
	busy := pgtest.Open(t, pooled, store.WithPooler(store.PoolerTransaction))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	for range 4 {
		go func() {
			for ctx.Err() == nil {
				_, _ = busy.Pool().Exec(ctx, "select pg_sleep(0.001)")
			}
		}()
	}
	for i := range 5 {
		if db := pgtest.Open(t, pooled); !db.Pooled() {
			t.Fatalf("open %d: the pooler was not found", i)
		}
	}
}

// TestMigrateThroughPooler migrates an empty database through PgBouncer
// with no direct URL, from two stores at once: the migrations run once,
// and the schema is current.
func TestMigrateThroughPooler(t *testing.T) {
	ctx := t.Context()
	admin := pgtest.URL(t)
	name := pgadmin.RandomName("pooled_")
	u, err := pgadmin.Create(ctx, admin, name, "")
	if err != nil {
		t.Fatal(err)
	}
	dbs := []*store.DB{pgtest.Open(t, pgtest.Pooled(t, u)), pgtest.Open(t, pgtest.Pooled(t, u))}
	t.Cleanup(func() {
		for _, db := range dbs {
			db.Close()
		}
		_ = pgadmin.Drop(context.Background(), admin, name)
	})
	var wg sync.WaitGroup
	errs := make([]error, len(dbs))
	for i, db := range dbs {
		wg.Go(func() { errs[i] = db.Migrate(ctx) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Migrate %d: %v", i, err)
		}
	}
	if err := dbs[0].Ready(ctx); err != nil {
		t.Errorf("Ready: %v", err)
	}
}

// TestTurnsThroughPooler runs a turn's writes and reads from many
// goroutines through PgBouncer, which keeps no prepared statement between
// transactions: nothing collides (42P05) or goes missing (26000).
func TestTurnsThroughPooler(t *testing.T) {
	db := pgtest.Open(t, pgtest.Pooled(t, pgtest.URL(t)))
	ctx := t.Context()
	if err := db.Ready(ctx); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	u := mustUser(t, db, "alice")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			c := mustConversation(t, db, u.ID)
			tu := mustTurn(t, db, u.ID, c.ID, fmt.Sprintf("question %d", g))
			for i := range 20 {
				d := toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "x"}}
				if i == 0 {
					d = toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}}
				}
				mustCommitAs(t, db, testOwner, write(t, tu, int64(i+1), d))
				evs, err := db.EventsAfter(ctx, tu.ID, 0, 1000)
				if err != nil || len(evs) != i+1 {
					errs <- fmt.Errorf("EventsAfter: %d events, %v; want %d", len(evs), err, i+1)
					return
				}
			}
			if _, _, err := db.RenewLeases(ctx, testOwner, time.Minute, []string{tu.ID}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestReplicaLease: a replica without a session is alive for the others
// while its replica lease runs, and gone once dropped.
func TestReplicaLease(t *testing.T) {
	direct := pgtest.URL(t)
	pooled := pgtest.Open(t, pgtest.Pooled(t, direct))
	other := pgtest.Open(t, direct)
	ctx := t.Context()
	me, them := newOwner("pooled"), newOwner("direct")
	count := func() int {
		t.Helper()
		n, err := other.OtherReplicas(ctx, them)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 0 {
		t.Fatalf("OtherReplicas before the lease = %d, want 0", n)
	}
	c, err := pooled.TakeCensus(ctx, time.Now(), me, true, nil, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if c.Others != 0 || c.Active != 0 || c.Orphans {
		t.Errorf("census of an empty database = %+v", c)
	}
	if pooled.LivenessHeldFor() <= 0 {
		t.Errorf("LivenessHeldFor = 0 after the census renewed the lease")
	}
	if n := count(); n != 1 {
		t.Errorf("OtherReplicas with the lease = %d, want 1", n)
	}
	if err := pooled.DropReplicaLease(ctx, me); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Errorf("OtherReplicas after the drop = %d, want 0", n)
	}
}
