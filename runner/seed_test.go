package runner

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/fanout"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/liveview"
	"github.com/toolmark/toolmark/markdown"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// countingLog is a fanout.Log that counts its reads.
type countingLog struct {
	fanout.Log
	reads *atomic.Int64
}

func (l countingLog) EventsAfter(ctx context.Context, turnID string, after int64, limit int) ([]toolmark.Event, error) {
	l.reads.Add(1)
	return l.Log.EventsAfter(ctx, turnID, after, limit)
}

func (l countingLog) Snapshot(ctx context.Context, turnID string) (toolmark.SnapshotData, error) {
	l.reads.Add(1)
	return l.Log.Snapshot(ctx, turnID)
}

// TestViewSeededFromTheJob starts live views late, while a turn runs and
// its events keep coming: each catches up from the job's state, reading
// nothing from the log, at a seq the log holds, with the content, calls,
// todos and HTML of the log replayed to that seq; fed the rest of the log,
// it ends as a view that saw every event. Once the job is gone, a view
// catches up from the log.
func TestViewSeededFromTheJob(t *testing.T) {
	ctx := t.Context()
	db := pgtest.New(t)
	var reads atomic.Int64
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	hub := fanout.NewHub(countingLog{Log: Log(db, quiet), reads: &reads})
	const rounds = 6
	steps := make(chan struct{})
	r := New(Config{Store: db, Hub: hub, Logger: quiet, Run: func(ctx context.Context, in Input, emit toolmark.EmitFunc) error {
		pace := func(context.Context, toolmark.EmitFunc) error { steps <- struct{}{}; return nil }
		return toolAgentPaced(rounds, pace)(ctx, in, emit)
	}})
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	turn := createTurn(t, db, r)
	var views []*liveview.View
	for range rounds {
		<-steps // a round emitted; its events may be pending or in flight
		v := liveview.New(markdown.Default())
		if err := hub.CatchUp(ctx, turn)(v, 1); err != nil {
			t.Fatal(err)
		}
		if v.Seq() < 2 {
			t.Fatalf("a view seeded at seq %d", v.Seq())
		}
		views = append(views, v)
	}
	if n := reads.Load(); n != 0 {
		t.Fatalf("views of a running turn read the log %d times", n)
	}
	if _, err := r.Wait(ctx, turn.ID); err != nil {
		t.Fatal(err)
	}
	evs, err := db.EventsAfter(ctx, turn.ID, 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	whole := viewOf(t, evs, 1<<62)
	for i, v := range views {
		seq := v.Seq()
		if got, want := snapshotOf(v.State(), seq), snapshotOf(replay(t, evs, seq), seq); !sameSnapshot(got, want) {
			t.Fatalf("view %d seeded at seq %d:\n got %+v\nwant %+v", i, seq, brief(got), brief(want))
		}
		if got, want := mustHTML(t, v), mustHTML(t, viewOf(t, evs, seq)); got != want {
			t.Fatalf("view %d seeded at seq %d renders\n%s\nwant\n%s", i, seq, got, want)
		}
		for _, e := range evs {
			if err := v.ApplyEvent(e); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := mustHTML(t, v), mustHTML(t, whole); got != want {
			t.Fatalf("view %d, seeded at seq %d, ends as\n%s\nwant\n%s", i, seq, got, want)
		}
	}
	mustShutdown(t, r)
	if err := hub.CatchUp(ctx, turn)(liveview.New(markdown.Default()), 2); err != nil || reads.Load() == 0 {
		t.Fatalf("a view of a turn no job runs caught up with %d log reads (%v)", reads.Load(), err)
	}
}

// toolAgentPaced is toolAgent's rounds, each followed by pace.
func toolAgentPaced(rounds int, pace func(context.Context, toolmark.EmitFunc) error) RunFunc {
	return func(ctx context.Context, in Input, emit toolmark.EmitFunc) error {
		for i := range rounds {
			id := fmt.Sprintf("call_%d", i)
			tc := toolcallmarkup.ToolCall{ID: id, Type: "search_documents", Status: toolcallmarkup.StatusRunning, Attrs: []toolcallmarkup.Attr{{Key: "query", Value: id}}}
			drafts := []toolmark.Draft{
				{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: fmt.Sprintf("Round %d <Tool", i)}},
				{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "Call> is text. "}},
				{Type: toolmark.EventToolCallStarted, Tag: tc, Data: toolmark.ToolCallData{ToolCallID: id, Name: tc.Type, Status: string(tc.Status), Markup: toolcallmarkup.OpenTag(tc)}},
				{Type: toolmark.EventTodoUpdate, Data: toolmark.TodoUpdateData{Todos: []toolmark.Todo{{Text: id, Status: "in_progress"}}}},
				{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: fmt.Sprintf("\n\nMore of round %d, a half-", i)}},
			}
			if i > 0 {
				prev := fmt.Sprintf("call_%d", i-1)
				done := toolcallmarkup.ToolCall{ID: prev, Type: "search_documents", Status: toolcallmarkup.StatusSuccess, Attrs: []toolcallmarkup.Attr{{Key: "query", Value: prev}}}
				drafts = append(drafts, toolmark.Draft{Type: toolmark.EventToolCallSuccess, Tag: done, Data: toolmark.ToolCallData{ToolCallID: prev, Name: done.Type,
					Status: string(done.Status), Markup: toolcallmarkup.OpenTag(done), Result: "found"}})
			}
			for _, d := range drafts {
				if err := emit(ctx, d); err != nil {
					return err
				}
			}
			if err := pace(ctx, emit); err != nil {
				return err
			}
		}
		return nil
	}
}

// viewOf is a live view fed the logged events up to seq.
func viewOf(t *testing.T, evs []toolmark.Event, seq int64) *liveview.View {
	t.Helper()
	v := liveview.New(markdown.Default())
	applyUpTo(t, evs, seq, v.ApplyEvent)
	return v
}

func mustHTML(t *testing.T, v *liveview.View) string {
	t.Helper()
	h, err := v.HTML()
	if err != nil {
		t.Fatal(err)
	}
	return h
}
