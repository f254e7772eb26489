package store_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// testOwner is the lease owner of the turns the helpers create. No test
// takes its liveness lock (ListenAs), so it is never alive: a test that
// needs a live owner takes a name of its own from newOwner.
const testOwner = "test-owner"

// newOwner returns a lease owner name no other test uses. Liveness locks
// are taken on the server that every test database shares, so a fixed name
// would let one test's live owner leak into another's.
func newOwner(role string) string { return role + "-" + rand.Text()[:12] }

// fixture is one user with one conversation and one queued turn leased by
// testOwner.
type fixture struct {
	db   *store.DB
	user toolmark.User
	conv toolmark.Conversation
	turn toolmark.Turn
}

func newFixture(tb testing.TB, opts ...store.Option) fixture {
	tb.Helper()
	db := pgtest.New(tb, opts...)
	f := fixture{db: db, user: mustUser(tb, db, "alice")}
	f.conv = mustConversation(tb, db, f.user.ID)
	f.turn = mustTurn(tb, db, f.user.ID, f.conv.ID, "hello")
	return f
}

func mustUser(tb testing.TB, db *store.DB, name string) toolmark.User {
	tb.Helper()
	u, err := db.EnsureUser(context.Background(), name)
	if err != nil {
		tb.Fatalf("EnsureUser(%q): %v", name, err)
	}
	return u
}

func mustConversation(tb testing.TB, db *store.DB, ownerID string) toolmark.Conversation {
	tb.Helper()
	c, err := db.CreateConversation(context.Background(), ownerID, "a conversation")
	if err != nil {
		tb.Fatalf("CreateConversation: %v", err)
	}
	return c
}

// mustTurn creates a queued turn leased by testOwner for an hour.
func mustTurn(tb testing.TB, db *store.DB, ownerID, convID, content string) toolmark.Turn {
	tb.Helper()
	return mustTurnAs(tb, db, testOwner, ownerID, convID, content)
}

// mustTurnAs creates a queued turn leased by leaseOwner for an hour, or
// without a lease when leaseOwner is "".
func mustTurnAs(tb testing.TB, db *store.DB, leaseOwner, ownerID, convID, content string) toolmark.Turn {
	tb.Helper()
	t, created, err := db.CreateTurn(context.Background(), store.NewTurn{
		OwnerID: ownerID, ConversationID: convID, Input: toolmark.TurnInput{Content: content},
		LeaseOwner: leaseOwner, LeaseTTL: time.Hour,
	})
	if err != nil || !created {
		tb.Fatalf("CreateTurn: %v (created %v)", err, created)
	}
	return t
}

// numbered numbers drafts after seq after and marshals their data, as the
// runner does.
func numbered(tb testing.TB, after int64, ds ...toolmark.Draft) []toolmark.Event {
	tb.Helper()
	now := time.Now().UTC().Truncate(time.Microsecond)
	rows := make([]toolmark.Event, len(ds))
	for i, d := range ds {
		rows[i] = toolmark.Event{Seq: after + int64(i) + 1, Type: d.Type, Data: mustJSON(tb, d.Data), Time: now}
	}
	return rows
}

// write is a write of turn tu logging ds after seq after.
func write(tb testing.TB, tu toolmark.Turn, after int64, ds ...toolmark.Draft) store.TurnWrite {
	tb.Helper()
	return store.TurnWrite{TurnID: tu.ID, MessageID: tu.AssistantMessageID, Events: numbered(tb, after, ds...)}
}

// lastSeq returns the seq of a turn's newest event.
func lastSeq(tb testing.TB, db *store.DB, turnID string) int64 {
	tb.Helper()
	tu, err := db.TurnByID(context.Background(), turnID)
	if err != nil {
		tb.Fatalf("TurnByID: %v", err)
	}
	return tu.LastSeq
}

// mustCommit logs ds for tu as testOwner, numbered after the turn's newest
// event, and returns the seq of the last.
func mustCommit(tb testing.TB, db *store.DB, tu toolmark.Turn, ds ...toolmark.Draft) int64 {
	tb.Helper()
	w := write(tb, tu, lastSeq(tb, db, tu.ID), ds...)
	mustCommitAs(tb, db, testOwner, w)
	return w.Events[len(w.Events)-1].Seq
}

func mustCommitAs(tb testing.TB, db *store.DB, owner string, ws ...store.TurnWrite) {
	tb.Helper()
	if err := db.Commit(context.Background(), owner, ws); err != nil {
		tb.Fatalf("Commit: %v", err)
	}
}

// finishWrite is the write that ends tu with status: its terminal event and
// its final content.
func finishWrite(tb testing.TB, tu toolmark.Turn, after int64, status toolmark.TurnStatus, errText, content string) store.TurnWrite {
	tb.Helper()
	typ := map[toolmark.TurnStatus]toolmark.EventType{
		toolmark.TurnCompleted: toolmark.EventTurnCompleted,
		toolmark.TurnCancelled: toolmark.EventTurnCancelled,
	}[status]
	if typ == "" {
		typ = toolmark.EventTurnFailed
	}
	w := write(tb, tu, after, toolmark.Draft{Type: typ, Data: toolmark.TurnEndData{Status: status, Error: errText}})
	w.Content = &content
	w.Finish = &store.Finish{Status: status, Error: errText}
	return w
}

// mustFinish ends tu as testOwner and returns the seq of its terminal event.
func mustFinish(tb testing.TB, db *store.DB, tu toolmark.Turn, status toolmark.TurnStatus, errText, content string) int64 {
	tb.Helper()
	w := finishWrite(tb, tu, lastSeq(tb, db, tu.ID), status, errText, content)
	mustCommitAs(tb, db, testOwner, w)
	return w.Events[0].Seq
}

// wantRefused fails the test unless err is a *store.RefusedError refusing
// exactly the turns of want, each with the toolmark error code given.
func wantRefused(tb testing.TB, what string, err error, want map[string]string) {
	tb.Helper()
	var refused *store.RefusedError
	if !errors.As(err, &refused) {
		tb.Errorf("%s: got error %v, want a *store.RefusedError", what, err)
		return
	}
	if len(refused.Turns) != len(want) {
		tb.Errorf("%s: got %d turns refused (%v), want %d", what, len(refused.Turns), refused, len(want))
	}
	for id, code := range want {
		why, ok := refused.Turns[id]
		switch {
		case !ok:
			tb.Errorf("%s: turn %s not refused, want code %q", what, id, code)
		case toolmark.ErrorCode(why) != code:
			tb.Errorf("%s: turn %s refused with %v (code %q), want code %q", what, id, why, toolmark.ErrorCode(why), code)
		}
	}
}

// wantLeaseLost fails the test unless err refuses exactly the turns ids
// with ErrLeaseLost.
func wantLeaseLost(tb testing.TB, what string, err error, ids ...string) {
	tb.Helper()
	want := map[string]string{}
	for _, id := range ids {
		want[id] = toolmark.ECONFLICT
	}
	wantRefused(tb, what, err, want)
	var refused *store.RefusedError
	if errors.As(err, &refused) {
		for _, id := range ids {
			if why := refused.Turns[id]; why != nil && !errors.Is(why, store.ErrLeaseLost) {
				tb.Errorf("%s: turn %s refused with %v, want ErrLeaseLost", what, id, why)
			}
		}
	}
}

// wantCode fails the test unless err carries the toolmark error code.
func wantCode(tb testing.TB, what string, err error, code string) {
	tb.Helper()
	if got := toolmark.ErrorCode(err); got != code {
		tb.Errorf("%s: got error %v (code %q), want code %q", what, err, got, code)
	}
}

// count returns the result of a count(*) query.
func count(tb testing.TB, db *store.DB, sql string, args ...any) int {
	tb.Helper()
	var n int
	if err := db.Pool().QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
	return n
}

// storedEvents counts the events in the rows of the events table (alias e)
// that rest, such as "join turns t on t.num = e.turn where t.id = $1",
// selects.
func storedEvents(tb testing.TB, db *store.DB, rest string, args ...any) int {
	tb.Helper()
	return count(tb, db, "select coalesce(sum("+store.EventsInRow+"), 0) from events e "+rest, args...)
}

// wantNoRows fails the test for each of tables that holds a row, saying
// after what (when).
func wantNoRows(tb testing.TB, db *store.DB, when string, tables ...string) {
	tb.Helper()
	for _, table := range tables {
		if n := count(tb, db, "select count(*) from "+table); n != 0 {
			tb.Errorf("%s: %d rows in %s, want 0", when, n, table)
		}
	}
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
