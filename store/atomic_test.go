package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/runner"
	"github.com/toolmark/toolmark/store"
)

// turnRecord is what a path that ends or hands over a turn changes: the
// turn's status and lease, its log, its message and its tool-call rows.
type turnRecord struct {
	Status    toolmark.TurnStatus
	Lease     string
	LastSeq   int64
	Events    int
	Terminal  int // terminal events in the log
	Content   string
	MsgStatus string
	OpenCalls int
}

func recordOf(tb testing.TB, db *store.DB, tu toolmark.Turn) turnRecord {
	tb.Helper()
	got, err := db.TurnByID(context.Background(), tu.ID)
	if err != nil {
		tb.Fatal(err)
	}
	r := turnRecord{Status: got.Status, Lease: got.LeaseOwner, LastSeq: got.LastSeq}
	es, err := db.EventsAfter(context.Background(), tu.ID, 0, 0)
	if err != nil {
		tb.Fatal(err)
	}
	r.Events = len(es)
	for _, e := range es {
		if e.Type.Terminal() {
			r.Terminal++
		}
	}
	r.OpenCalls = count(tb, db, `select count(*) from tool_calls where turn_id = $1 and status not in ('success', 'error', 'cancelled')`, tu.ID)
	if err := db.Pool().QueryRow(context.Background(), `select content, status from messages where id = $1`, tu.AssistantMessageID).Scan(&r.Content, &r.MsgStatus); err != nil {
		tb.Fatal(err)
	}
	return r
}

// TestEndsAreAtomic fails the database between any two statements of every
// path that ends a turn or gives it up — a live end, a cancel, the sweep,
// a drain's hand-over — and checks that a failed attempt changes nothing
// (no final status without its terminal event, no terminal event without
// the final status) and that the attempt after it ends the turn whole.
// (Adopt and the lease renewal are single statements.)
func TestEndsAreAtomic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	paths := []struct {
		name string
		// path returns the attempt that ends (or hands over) a turn that
		// script left running as owner, to be tried again as it is after
		// a failure; want is the turn's status after.
		path func(r *turnWriter) func() error
		want toolmark.TurnStatus
	}{
		{"live end", func(r *turnWriter) func() error {
			ws := r.finishWrites(toolmark.TurnCompleted, "")
			return func() error { return db.Commit(ctx, r.owner, ws) }
		}, toolmark.TurnCompleted},
		{"cancel", func(r *turnWriter) func() error {
			ws := r.finishWrites(toolmark.TurnCancelled, "cancelled")
			return func() error { return db.Commit(ctx, r.owner, ws) }
		}, toolmark.TurnCancelled},
		{"sweep", func(r *turnWriter) func() error {
			return func() error {
				ids, err := db.SweepExpired(ctx, time.Now().Add(2*time.Hour), "sweeper", true, nil, runner.Interrupt)
				if err == nil && len(ids) != 1 {
					return fmt.Errorf("swept %v, want one turn", ids)
				}
				return err
			}
		}, toolmark.TurnInterrupted},
		{"hand-over", func(r *turnWriter) func() error {
			content := r.st.Content()
			ws := []store.TurnWrite{{TurnID: r.tu.ID, MessageID: r.tu.AssistantMessageID, Content: &content, HandOver: time.Minute}}
			return func() error { return db.Commit(ctx, r.owner, ws) }
		}, toolmark.TurnRunning},
	}
	for _, p := range paths {
		// Statement k of the path's batch fails, k = 0 … 7 (past the last:
		// the failure comes after every statement, before the commit).
		for k := 0; k <= 7; k++ {
			owner := newOwner("owner")
			tu := mustTurnAs(t, db, owner, f.user.ID, mustConversation(t, db, f.user.ID).ID, "question")
			r := newRunner(t, db, tu)
			r.owner = owner
			script(r, 7) // tool calls open, todos unfinished
			before := recordOf(t, db, tu)

			attempt := p.path(r)
			db.FailCommitsAt(k)
			err := attempt()
			db.FailCommitsAt(-1)
			if err == nil {
				t.Fatalf("%s, statement %d fails: no error", p.name, k)
			}
			if got := recordOf(t, db, tu); got != before {
				t.Errorf("%s, statement %d fails: the turn changed\n got %+v\nwant %+v", p.name, k, got, before)
			}

			if err := attempt(); err != nil {
				t.Fatalf("%s, again: %v", p.name, err)
			}
			after := recordOf(t, db, tu)
			final := after.Status.Final()
			if after.Status != p.want || final != (after.Terminal == 1) || after.Terminal > 1 {
				t.Errorf("%s: got %+v, want status %s with exactly one terminal event if final", p.name, after, p.want)
			}
			if final && (after.OpenCalls != 0 || after.LastSeq != int64(after.Events) || after.Lease != "") {
				t.Errorf("%s: got %+v, want no open tool call, the last seq in the turn, no lease", p.name, after)
			}
			if !final && after.Lease != "" {
				t.Errorf("%s: got %+v, want the lease given up", p.name, after)
			}
		}
	}
}
