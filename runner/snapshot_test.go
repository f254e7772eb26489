package runner

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/toolcallmarkup"
	"github.com/toolmark/toolmark/turnstate"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestSnapshotMatchesReplayedLog takes the snapshots a follower gets (the
// hub's Log) of a turn while its commits land, and checks each against the
// turn's log replayed from the start to the snapshot's seq: the same
// content, tool calls, todos and status. The stored message lags the log
// (it is written at tool status changes and every few seconds), so most
// snapshots replay events over it; some must, or the test proves nothing.
func TestSnapshotMatchesReplayedLog(t *testing.T) {
	ctx := context.Background()
	db := pgtest.New(t)
	const rounds = 40
	r := New(Config{Store: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Run: toolAgent(rounds)})
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	turn := createTurn(t, db, r)
	log := Log(db, nil)
	var wg sync.WaitGroup
	var snaps []toolmark.SnapshotData
	var lagging int
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, storedSeq, err := db.Snapshot(ctx, turn.ID)
			if err != nil {
				t.Error(err)
				return
			}
			snap, err := log.Snapshot(ctx, turn.ID)
			if err != nil {
				t.Error(err)
				return
			}
			if storedSeq < snap.Seq {
				lagging++
			}
			snaps = append(snaps, snap)
		}
	})
	if _, err := r.Wait(ctx, turn.ID); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	evs, err := db.EventsAfter(ctx, turn.ID, 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) < 10 || lagging == 0 {
		t.Fatalf("%d snapshots, %d over a stored message behind the log: too few to tell", len(snaps), lagging)
	}
	for _, snap := range snaps {
		want := replay(t, evs, snap.Seq)
		if got := snapshotOf(want, snap.Seq); !sameSnapshot(got, snap) {
			t.Fatalf("the snapshot at seq %d differs from the log replayed to it:\n got %+v\nwant %+v", snap.Seq, brief(snap), brief(got))
		}
	}
	t.Logf("%d snapshots while %d events were committed, %d replayed over a stored message behind the log", len(snaps), len(evs), lagging)
}

// toolAgent answers in rounds of text, a tool call through its stages and
// a plan, pausing between events so that commits land one after another.
func toolAgent(rounds int) RunFunc {
	return func(ctx context.Context, _ Input, emit toolmark.EmitFunc) error {
		call := func(typ toolmark.EventType, id string, st toolcallmarkup.Status, result string) error {
			tc := toolcallmarkup.ToolCall{ID: id, Type: "search_documents", Status: st, Attrs: []toolcallmarkup.Attr{{Key: "query", Value: id}}}
			return emit(ctx, toolmark.Draft{Type: typ, Tag: tc, Data: toolmark.ToolCallData{ToolCallID: id, Name: tc.Type,
				Status: string(st), Markup: toolcallmarkup.OpenTag(tc), Result: result}})
		}
		for i := range rounds {
			id := fmt.Sprintf("call_%d", i)
			steps := []func() error{
				func() error {
					return emit(ctx, toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: fmt.Sprintf("Round %d, first words. ", i)}})
				},
				func() error { return call(toolmark.EventToolCallStarted, id, toolcallmarkup.StatusPending, "") },
				func() error { return call(toolmark.EventToolCallRunning, id, toolcallmarkup.StatusRunning, "") },
				func() error {
					return call(toolmark.EventToolCallSuccess, id, toolcallmarkup.StatusSuccess, fmt.Sprintf("%d found", i))
				},
				func() error {
					return emit(ctx, toolmark.Draft{Type: toolmark.EventTodoUpdate, Data: toolmark.TodoUpdateData{Todos: []toolmark.Todo{{Text: id, Status: "completed"}}}})
				},
				func() error {
					return emit(ctx, toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: fmt.Sprintf("Then more words of round %d.\n\n", i)}})
				},
			}
			for _, step := range steps {
				if err := step(); err != nil {
					return err
				}
				time.Sleep(time.Millisecond)
			}
		}
		return nil
	}
}

// replay applies the logged events up to seq to a new state.
func replay(t *testing.T, evs []toolmark.Event, seq int64) *turnstate.State {
	t.Helper()
	st := turnstate.New()
	st.StatusText = statusText
	applyUpTo(t, evs, seq, st.ApplyEvent)
	return st
}

// applyUpTo hands apply the logged events up to seq.
func applyUpTo(t *testing.T, evs []toolmark.Event, seq int64, apply func(toolmark.Event) error) {
	t.Helper()
	for _, e := range evs {
		if e.Seq > seq {
			break
		}
		if err := apply(e); err != nil {
			t.Fatal(err)
		}
	}
}

func snapshotOf(st *turnstate.State, seq int64) toolmark.SnapshotData {
	return toolmark.SnapshotData{Content: st.Content(), Seq: seq, Status: st.Status(), ToolCalls: st.Records(), Todos: st.Todos()}
}

// sameSnapshot compares what a client shows of a snapshot: content,
// status, the plan, and each call's id, status, result and error.
func sameSnapshot(a, b toolmark.SnapshotData) bool {
	return a.Content == b.Content && a.Seq == b.Seq && a.Status == b.Status &&
		slices.Equal(a.Todos, b.Todos) && slices.Equal(callsOf(a), callsOf(b))
}

func callsOf(d toolmark.SnapshotData) []string {
	var out []string
	for _, c := range d.ToolCalls {
		out = append(out, c.ID+"|"+c.Status+"|"+c.Result+"|"+c.Error)
	}
	return out
}

func brief(d toolmark.SnapshotData) string {
	return fmt.Sprintf("seq %d status %s calls %v todos %v content %d bytes …%q", d.Seq, d.Status, callsOf(d), d.Todos,
		len(d.Content), d.Content[max(0, len(d.Content)-80):])
}
