package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
)

func TestUploadsOwnerDedupAndTotal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFixture(t).db
	alice, bob := mustUser(t, db, "alice"), mustUser(t, db, "bob")
	a, err := db.CreateUpload(ctx, alice.ID, "a.txt", "text/plain", []byte("hello"), 12)
	if err != nil {
		t.Fatal(err)
	}
	again, err := db.CreateUpload(ctx, alice.ID, "other.txt", "text/plain", []byte("hello"), 12)
	if err != nil || again.ID != a.ID || again.Name != "a.txt" {
		t.Fatalf("same bytes again: got %+v, %v; want upload %s", again, err, a.ID)
	}
	b, err := db.CreateUpload(ctx, bob.ID, "a.txt", "text/plain", []byte("hello"), 12)
	if err != nil || b.ID == a.ID {
		t.Fatalf("another owner's same bytes: got %+v, %v; want a new upload", b, err)
	}
	// 5 bytes kept, 7 more fit the total of 12, 8 do not.
	_, err = db.CreateUpload(ctx, alice.ID, "big.txt", "text/plain", []byte("12345678"), 12)
	wantCode(t, "past the total", err, toolmark.ETOOLARGE)
	if _, err := db.CreateUpload(ctx, alice.ID, "fit.txt", "text/plain", []byte("1234567"), 12); err != nil {
		t.Fatalf("up to the total: %v", err)
	}
	got, err := db.GetUpload(ctx, alice.ID, a.ID)
	if err != nil || string(got.Data) != "hello" || got.MediaType != "text/plain" || got.Size != 5 || got.URL != "/api/uploads/"+a.ID {
		t.Fatalf("GetUpload: got %+v, %v", got, err)
	}
	_, err = db.GetUpload(ctx, bob.ID, a.ID)
	wantCode(t, "another user's upload", err, toolmark.ENOTFOUND)
	_, err = db.Uploads(ctx, alice.ID, []string{a.ID, b.ID}, false)
	wantCode(t, "a list with another user's upload", err, toolmark.ENOTFOUND)
	if err == nil || !strings.Contains(toolmark.ErrorMessage(err), b.ID) {
		t.Fatalf("got %v, want an error naming %s", err, b.ID)
	}
}

func TestCreateTurnWritesAttachments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFixture(t).db
	u := mustUser(t, db, "carol")
	conv := mustConversation(t, db, u.ID)
	x, _ := db.CreateUpload(ctx, u.ID, "x.txt", "text/plain", []byte("x"), 0)
	y, _ := db.CreateUpload(ctx, u.ID, "y.txt", "text/plain", []byte("y"), 0)
	tu, _, err := db.CreateTurn(ctx, store.NewTurn{OwnerID: u.ID, ConversationID: conv.ID, Input: toolmark.TurnInput{Content: "look", Attachments: []string{y.ID, x.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, `select count(*) from message_attachments a join turns t on t.user_message_id = a.message_id
		where t.id = $1 and ((a.pos = 1 and a.upload_id = $2) or (a.pos = 2 and a.upload_id = $3))`, tu.ID, y.ID, x.ID); n != 2 {
		t.Fatalf("got %d attachments in order, want 2", n)
	}
	got, err := db.MessageAttachments(ctx, []string{tu.UserMessageID})
	if err != nil || len(got[tu.UserMessageID]) != 2 || got[tu.UserMessageID][0].ID != y.ID || got[tu.UserMessageID][0].Data != nil {
		t.Fatalf("MessageAttachments: got %+v, %v", got, err)
	}
	byTurn, err := db.TurnAttachments(ctx, []string{tu.ID, mustTurnAs(t, db, "", u.ID, mustConversation(t, db, u.ID).ID, "none").ID})
	if err != nil || len(byTurn) != 1 || len(byTurn[tu.ID]) != 2 || byTurn[tu.ID][1].ID != x.ID {
		t.Fatalf("TurnAttachments: got %+v, %v", byTurn, err)
	}
	data, err := db.UploadBytes(ctx, []string{x.ID, y.ID})
	if err != nil || string(data[x.ID]) != "x" || string(data[y.ID]) != "y" {
		t.Fatalf("UploadBytes: got %q, %v", data, err)
	}
}

// TestUploadText: the text read from a PDF is kept once, read back by its
// owner only, and given to the agent with the bytes.
func TestUploadText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFixture(t).db
	u, other := mustUser(t, db, "dora"), mustUser(t, db, "eve")
	up, err := db.CreateUpload(ctx, u.ID, "r.pdf", "application/pdf", []byte("%PDF-1.4 r"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if text, read, err := db.UploadText(ctx, u.ID, up.ID); err != nil || read || text != "" {
		t.Fatalf("before reading: got %q, %v, %v; want not read", text, read, err)
	}
	if err := db.SetUploadText(ctx, up.ID, "Quarterly report"); err != nil {
		t.Fatal(err)
	}
	if text, read, err := db.UploadText(ctx, u.ID, up.ID); err != nil || !read || text != "Quarterly report" {
		t.Fatalf("after reading: got %q, %v, %v", text, read, err)
	}
	_, _, err = db.UploadText(ctx, other.ID, up.ID)
	wantCode(t, "another user's upload", err, toolmark.ENOTFOUND)
	tu, _, err := db.CreateTurn(ctx, store.NewTurn{OwnerID: u.ID, ConversationID: mustConversation(t, db, u.ID).ID,
		Input: toolmark.TurnInput{Content: "read", Attachments: []string{up.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.MessageUploads(ctx, tu.UserMessageID)
	if err != nil || len(got) != 1 || got[0].Text != "Quarterly report" || string(got[0].Data) != "%PDF-1.4 r" {
		t.Fatalf("MessageUploads: got %+v, %v", got, err)
	}
}

// TestUploadTotalUnderConcurrency: uploads racing one another never bring
// a user's uploads past the total.
func TestUploadTotalUnderConcurrency(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFixture(t, store.WithMaxConns(16)).db
	u := mustUser(t, db, "frank")
	const n, size, total = 16, 100, 350
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			data := []byte(fmt.Sprintf("%0*d", size, i))
			_, errs[i] = db.CreateUpload(ctx, u.ID, fmt.Sprintf("f%d.txt", i), "text/plain", data, total)
		})
	}
	wg.Wait()
	kept := 0
	for _, err := range errs {
		switch {
		case err == nil:
			kept++
		case toolmark.ErrorCode(err) != toolmark.ETOOLARGE:
			t.Errorf("CreateUpload: %v", err)
		}
	}
	if sum := count(t, db, `select coalesce(sum(size), 0)::int from uploads where owner_id = $1`, u.ID); sum > total || kept != total/size {
		t.Errorf("%d uploads kept, %d bytes in all; want %d, at most %d", kept, sum, total/size, total)
	}
}

// TestCreateTurnWithDeletedUpload: a turn whose attachment was deleted
// after it was checked is not created without it: ENOTFOUND naming it.
func TestCreateTurnWithDeletedUpload(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFixture(t).db
	u := mustUser(t, db, "gina")
	conv := mustConversation(t, db, u.ID)
	up, err := db.CreateUpload(ctx, u.ID, "gone.txt", "text/plain", []byte("gone"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteUpload(ctx, u.ID, up.ID); err != nil {
		t.Fatal(err)
	}
	_, _, err = db.CreateTurn(ctx, store.NewTurn{OwnerID: u.ID, ConversationID: conv.ID, Input: toolmark.TurnInput{Content: "look", Attachments: []string{up.ID}}})
	wantCode(t, "a deleted attachment", err, toolmark.ENOTFOUND)
	if err == nil || !strings.Contains(toolmark.ErrorMessage(err), up.ID) {
		t.Errorf("got %v, want an error naming %s", err, up.ID)
	}
	if n := count(t, db, `select count(*) from messages where conversation_id = $1`, conv.ID); n != 0 {
		t.Errorf("%d messages written, want none", n)
	}
}
