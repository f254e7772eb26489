package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/pgtest"
	"github.com/toolmark/toolmark/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// fixture is one user with one conversation and one queued turn.
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

func mustTurn(tb testing.TB, db *store.DB, ownerID, convID, content string) toolmark.Turn {
	tb.Helper()
	t, created, err := db.CreateTurn(context.Background(), store.NewTurn{OwnerID: ownerID, ConversationID: convID, Content: content})
	if err != nil || !created {
		tb.Fatalf("CreateTurn: %v (created %v)", err, created)
	}
	return t
}

func mustAppend(tb testing.TB, db *store.DB, turn toolmark.Turn, in ...store.EventInput) []toolmark.Event {
	tb.Helper()
	es, err := db.AppendEvents(context.Background(), turn.ID, turn.AssistantMessageID, in)
	if err != nil {
		tb.Fatalf("AppendEvents: %v", err)
	}
	return es
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

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
