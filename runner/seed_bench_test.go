package runner

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/fanout"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/liveview"
	"github.com/toolmark/toolmark/markdown"
)

// BenchmarkLateView is a live view that starts late on a running turn of
// 60 rounds (text, a tool call, a plan), catching up to its newest
// committed event (300), rendered whole: seeded from the job's state (job), or, as a replica
// that does not run the turn does, from the log (log: a snapshot read in
// one transaction, the events after it replayed).
func BenchmarkLateView(b *testing.B) {
	ctx := b.Context()
	db := pgtest.New(b)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	paused, release := make(chan struct{}), make(chan struct{})
	rounds := toolAgentPaced(60, func(context.Context, toolmark.EmitFunc) error { return nil })
	r := New(Config{Store: db, Logger: quiet, Run: func(ctx context.Context, in Input, emit toolmark.EmitFunc) error {
		if err := rounds(ctx, in, emit); err != nil {
			return err
		}
		close(paused) // its events may still be pending: the first seed waits for their commit
		<-release
		return nil
	}})
	if err := r.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	turn := createTurn(b, db, r)
	defer close(release)
	<-paused
	first := liveview.New(markdown.Default())
	if err := r.Hub().CatchUp(ctx, turn)(first, 1); err != nil { // waits for the last commit
		b.Fatal(err)
	}
	upTo := first.Seq()
	for _, bb := range []struct {
		name string
		hub  *fanout.Hub
	}{
		{"job", r.Hub()},
		{"log", fanout.NewHub(Log(db, quiet))},
	} {
		b.Run(bb.name, func(b *testing.B) {
			seq := int64(0)
			for b.Loop() {
				v := liveview.New(markdown.Default())
				if err := bb.hub.CatchUp(ctx, turn)(v, upTo); err != nil {
					b.Fatal(err)
				}
				if _, err := v.HTML(); err != nil {
					b.Fatal(err)
				}
				seq = v.Seq()
			}
			b.ReportMetric(float64(seq), "seq")
		})
	}
}
