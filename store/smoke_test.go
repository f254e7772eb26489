package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
)

func TestSmoke(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	es := mustAppend(t, db, f.turn,
		store.EventInput{Type: toolmark.EventTurnStarted},
		store.EventInput{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "hi"}})
	if es[0].Seq != 1 || es[1].Seq != 2 {
		t.Fatalf("got seqs %d %d", es[0].Seq, es[1].Seq)
	}
	got, err := db.EventsAfter(ctx, f.turn.ID, 0, 10)
	if err != nil || len(got) != 2 {
		t.Fatalf("EventsAfter: %v %v", got, err)
	}
	if err := db.AcquireLease(ctx, f.turn.ID, "r1", time.Second); err != nil {
		t.Fatal(err)
	}
	if err := db.RenewLease(ctx, f.turn.ID, "r1", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := db.MarkTurnRunning(ctx, f.turn.ID); err != nil {
		t.Fatal(err)
	}
	ids, err := db.SweepExpired(ctx, time.Now().Add(time.Hour))
	if err != nil || len(ids) != 1 {
		t.Fatalf("sweep: %v %v", ids, err)
	}
	c, seq, err := db.Snapshot(ctx, f.turn.ID)
	t.Log(c, seq, err)
	ms, err := db.ListMessages(ctx, f.user.ID, f.conv.ID)
	t.Log(ms, err)
	if _, err := db.UpsertDocument(ctx, "a.md", "Go", "Go is a language"); err != nil {
		t.Fatal(err)
	}
	hits, err := db.SearchDocuments(ctx, "language", 5)
	t.Log(hits, err)
	n, err := db.PruneEvents(ctx, time.Now().Add(time.Hour))
	t.Log(n, err)
	_, err = db.EventsAfter(ctx, f.turn.ID, 0, 10)
	t.Log(err)
	h, err := db.ConversationHistory(ctx, f.conv.ID, "")
	t.Log(h, err)
}
