package runner_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/runner"
	"github.com/toolmark/toolmark/store"
)

// TestIdleReplicaCostsNothing starts replicas with no turn to run, with a
// session and through PgBouncer without one, and counts the statements
// each sends over 6.5 s once started: at most one a look, a look every
// 5 s with a session and every 3 s (a fifth of the lease time) without.
// They ran nine a second, a sweep every 250 ms and a peer count every
// second.
func TestIdleReplicaCostsNothing(t *testing.T) {
	direct := pgtest.URL(t)
	for _, tt := range []struct {
		name string
		url  string
		max  int64
	}{
		{"direct", direct, 2},
		{"pooled", pgtest.Pooled(t, direct), 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var st pgtest.Statements
			db := pgtest.Open(t, tt.url, store.WithTracer(&st))
			r := runner.New(runner.Config{Store: db, Run: func(context.Context, runner.Input, toolmark.EmitFunc) error { return nil }})
			if err := r.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			time.Sleep(500 * time.Millisecond) // the first look after SweepInterval
			before := st.N.Load()
			time.Sleep(6500 * time.Millisecond)
			if n := st.N.Load() - before; n > tt.max {
				t.Errorf("an idle replica sent %d statements in 6.5 s, want at most %d", n, tt.max)
			}
		})
	}
}
