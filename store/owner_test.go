package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
)

// TestOwnerIsolation checks that every owner-scoped method treats another
// user's conversation or turn exactly like a missing one, and changes
// nothing.
func TestOwnerIsolation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	bob := mustUser(t, db, "bob")
	const missing = "00000000-0000-0000-0000-000000000000"

	tests := []struct {
		name string
		call func(ownerID, convID, turnID string) error
	}{
		{"GetConversation", func(o, c, _ string) error { _, err := db.GetConversation(ctx, o, c); return err }},
		{"ListMessages", func(o, c, _ string) error { _, err := db.ListMessages(ctx, o, c); return err }},
		{"DeleteConversation", func(o, c, _ string) error { return db.DeleteConversation(ctx, o, c) }},
		{"SetConversationSummary", func(o, c, _ string) error { return db.SetConversationSummary(ctx, o, c, "stolen") }},
		{"CreateTurn", func(o, c, _ string) error {
			_, _, err := db.CreateTurn(ctx, store.NewTurn{OwnerID: o, ConversationID: c, Input: toolmark.TurnInput{Content: "hi"}})
			return err
		}},
		{"GetTurn", func(o, _, tu string) error { _, err := db.GetTurn(ctx, o, tu); return err }},
		{"RequestCancel", func(o, _, tu string) error { _, err := db.RequestCancel(ctx, o, tu); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			other := tt.call(bob.ID, f.conv.ID, f.turn.ID)
			absent := tt.call(f.user.ID, missing, missing)
			wantCode(t, "another owner's id", other, toolmark.ENOTFOUND)
			wantCode(t, "a missing id", absent, toolmark.ENOTFOUND)
			if toolmark.ErrorMessage(other) != toolmark.ErrorMessage(absent) {
				t.Errorf("got message %q for another owner's id, want %q as for a missing id",
					toolmark.ErrorMessage(other), toolmark.ErrorMessage(absent))
			}
		})
	}

	cs, err := db.ListConversations(ctx, bob.ID)
	if err != nil || len(cs) != 0 {
		t.Errorf("ListConversations(bob) = %v, %v; want no conversations", cs, err)
	}
	// Nothing changed for alice.
	c, err := db.GetConversation(ctx, f.user.ID, f.conv.ID)
	if err != nil || c.Summary != "" {
		t.Errorf("alice's conversation after bob's calls: %+v, %v; want it unchanged", c, err)
	}
	if n := count(t, db, "select count(*) from turns"); n != 1 {
		t.Errorf("got %d turns, want 1", n)
	}
	if _, cancel, _ := db.RenewLeases(ctx, testOwner, time.Hour, []string{f.turn.ID}); len(cancel) != 0 {
		t.Error("bob cancelled alice's turn")
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFixture(t).db
	u := mustUser(t, db, "carol")
	if again := mustUser(t, db, "carol"); again.ID != u.ID {
		t.Fatalf("EnsureUser twice: got id %s, want %s", again.ID, u.ID)
	}
	tok, err := db.CreateToken(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.UserByToken(ctx, tok)
	if err != nil || got.ID != u.ID {
		t.Fatalf("UserByToken = %+v, %v; want %s", got, err, u.ID)
	}
	if n := count(t, db, "select count(*) from api_tokens where token_hash = $1::text::bytea", tok); n != 0 {
		t.Error("the token is stored in clear")
	}
	_, err = db.UserByToken(ctx, tok+"x")
	wantCode(t, "UserByToken(wrong)", err, toolmark.EUNAUTHORIZED)
	_, err = db.CreateToken(ctx, "00000000-0000-0000-0000-000000000000")
	wantCode(t, "CreateToken(missing user)", err, toolmark.ENOTFOUND)
}
