package runner

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/store"
)

// TestHubEntryFollowsTheJob checks, on a real database, that a turn's
// entry in the hub is opened by its job's life and closed by its end, on
// every path: the agent finds it open as it runs, and once the job is
// gone (Shutdown waits for it) it is closed after a completion, a failure,
// a cancel, a queued turn handed back, and a running turn handed over to
// another replica — which opens it there as it runs it.
func TestHubEntryFollowsTheJob(t *testing.T) {
	for _, tt := range []struct {
		name   string
		result error                          // what the agent returns once let go
		end    func(r *Runner, turnID string) // what ends the job; nil lets the agent go
		status toolmark.TurnStatus
	}{
		{name: "completed", status: toolmark.TurnCompleted},
		{name: "failed", result: errors.New("the model broke"), status: toolmark.TurnFailed},
		{name: "cancelled", end: func(r *Runner, id string) { r.Cancel(id) }, status: toolmark.TurnCancelled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			db := pgtest.New(t)
			a := newHeldAgent()
			r := startRunner(t, db, "a", a)
			turn := createTurn(t, db, r)
			a.started(t, r, turn.ID)
			if tt.end != nil {
				tt.end(r, turn.ID)
			} else {
				a.release <- tt.result
			}
			if got, err := r.Wait(ctx, turn.ID); err != nil || got.Status != tt.status {
				t.Fatalf("the turn ended %v (%v), want %v", got.Status, err, tt.status)
			}
			mustShutdown(t, r)
			if r.Hub().Local(turn.ID) {
				t.Fatal("the job is gone and the hub still holds its turn as local")
			}
		})
	}
	t.Run("handed back while queued", func(t *testing.T) {
		db := pgtest.New(t)
		a := newHeldAgent()
		r := startRunner(t, db, "a", a, func(c *Config) { c.MaxTurns = 1 })
		first := createTurn(t, db, r)
		a.started(t, r, first.ID)
		queued := createTurn(t, db, r)
		if !r.Hub().Local(queued.ID) {
			t.Fatal("a queued turn's entry is not open")
		}
		r.Drain(t.Context()) // no other replica: the running turn stays, the queued one goes back
		a.release <- nil
		mustShutdown(t, r)
		if r.Hub().Local(queued.ID) {
			t.Fatal("a turn handed back while queued is still local")
		}
		if got, err := db.TurnByID(t.Context(), queued.ID); err != nil || got.Status != toolmark.TurnQueued {
			t.Fatalf("the turn handed back is %v (%v), want still queued for another replica", got.Status, err)
		}
	})
	t.Run("handed over", func(t *testing.T) {
		ctx := t.Context()
		u := pgtest.URL(t)
		a, b := newHeldAgent(), newHeldAgent()
		ra := startRunner(t, pgtest.Open(t, u), "a", a)
		rb := startRunner(t, pgtest.Open(t, u), "b", b)
		turn := createTurn(t, pgtest.Open(t, u), ra)
		a.started(t, ra, turn.ID)
		ra.Drain(ctx) // another replica is alive: the running turn moves to it
		mustShutdown(t, ra)
		if ra.Hub().Local(turn.ID) {
			t.Fatal("the replica that handed the turn over still holds it as local")
		}
		b.started(t, rb, turn.ID) // adopted: b runs it, its entry open there
		b.release <- nil
		if got, err := rb.Wait(ctx, turn.ID); err != nil || got.Status != toolmark.TurnCompleted {
			t.Fatalf("the turn ended %v (%v) on the replica it moved to", got.Status, err)
		}
		mustShutdown(t, rb)
		if rb.Hub().Local(turn.ID) {
			t.Fatal("the replica that finished the turn still holds it as local")
		}
	})
}

// heldAgent runs a turn until it is let go (release) or stopped, and
// reports each turn it starts, with whether the hub held it as local then.
type heldAgent struct {
	r       *Runner // the runner it runs for, set before its first turn
	release chan error
	runs    chan heldRun
}

type heldRun struct {
	turnID string
	local  bool
}

func newHeldAgent() *heldAgent {
	return &heldAgent{release: make(chan error, 1), runs: make(chan heldRun, 4)}
}

func (a *heldAgent) run(ctx context.Context, in Input, emit toolmark.EmitFunc) error {
	a.runs <- heldRun{turnID: in.Turn.ID, local: a.r.Hub().Local(in.Turn.ID)}
	if err := emit(ctx, toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "Working. "}}); err != nil {
		return err
	}
	select {
	case err := <-a.release:
		return err
	case <-ctx.Done():
		return nil // every call it started is final: it started none
	}
}

// started waits until the agent runs turnID, and checks the turn's entry
// was open in r's hub as it started.
func (a *heldAgent) started(t *testing.T, r *Runner, turnID string) {
	t.Helper()
	select {
	case run := <-a.runs:
		if run.turnID != turnID || !run.local {
			t.Fatalf("the agent started %s with its entry local: %v; want %s, local", run.turnID, run.local, turnID)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("turn %s did not start", turnID)
	}
	if !r.Hub().Local(turnID) {
		t.Fatal("a running turn's entry is not open")
	}
}

// startRunner starts a runner of a's turns on db.
func startRunner(t *testing.T, db *store.DB, owner string, a *heldAgent, opts ...func(*Config)) *Runner {
	t.Helper()
	cfg := Config{Store: db, Run: a.run, Owner: t.Name() + "/" + owner, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, o := range opts {
		o(&cfg)
	}
	r := New(cfg)
	a.r = r
	if err := r.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

func createTurn(t testing.TB, db *store.DB, r *Runner) toolmark.Turn {
	t.Helper()
	ctx := t.Context()
	u, err := db.EnsureUser(ctx, "hub")
	if err != nil {
		t.Fatal(err)
	}
	conv, err := db.CreateConversation(ctx, u.ID, "hub entries")
	if err != nil {
		t.Fatal(err)
	}
	turn, err := r.Create(ctx, store.NewTurn{OwnerID: u.ID, ConversationID: conv.ID, Input: toolmark.TurnInput{Content: "go"}})
	if err != nil {
		t.Fatal(err)
	}
	return turn
}

// mustShutdown waits until r's jobs are gone (each forgotten, its entry
// closed).
func mustShutdown(t *testing.T, r *Runner) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := r.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}
