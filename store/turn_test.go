package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/store"
)

func TestCreateTurnBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFixture(t, store.WithMaxContentBytes(1024)).db
	u := mustUser(t, db, "dave")
	conv := mustConversation(t, db, u.ID)
	tests := []struct {
		name string
		nt   store.NewTurn
		code string
	}{
		{"empty", store.NewTurn{Input: toolmark.TurnInput{Content: ""}}, toolmark.EINVALID},
		{"blank", store.NewTurn{Input: toolmark.TurnInput{Content: " \n\t"}}, toolmark.EINVALID},
		{"too large", store.NewTurn{Input: toolmark.TurnInput{Content: strings.Repeat("a", 1025)}}, toolmark.ETOOLARGE},
		{"invalid UTF-8", store.NewTurn{Input: toolmark.TurnInput{Content: "caf\xe9"}}, toolmark.EINVALID},
		{"NUL byte", store.NewTurn{Input: toolmark.TurnInput{Content: "a\x00b"}}, toolmark.EINVALID},
		{"NUL in idempotency key", store.NewTurn{Input: toolmark.TurnInput{Content: "ok"}, IdempotencyKey: "k\x00"}, toolmark.EINVALID},
		{"unknown conversation", store.NewTurn{Input: toolmark.TurnInput{Content: "ok"}, ConversationID: "00000000-0000-0000-0000-000000000000"}, toolmark.ENOTFOUND},
		{"malformed conversation id", store.NewTurn{Input: toolmark.TurnInput{Content: "ok"}, ConversationID: "x\x00\xff"}, toolmark.ENOTFOUND},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.nt.OwnerID = u.ID
			if tt.nt.ConversationID == "" {
				tt.nt.ConversationID = conv.ID
			}
			_, _, err := db.CreateTurn(ctx, tt.nt)
			wantCode(t, "CreateTurn", err, tt.code)
			if n := count(t, db, "select count(*) from messages where conversation_id = $1", conv.ID); n != 0 {
				t.Errorf("got %d messages written, want 0", n)
			}
		})
	}
	if n := count(t, db, "select count(*) from turns where conversation_id = $1", conv.ID); n != 0 {
		t.Errorf("got %d turns written, want 0", n)
	}
	// Exactly at the limit is fine.
	if _, _, err := db.CreateTurn(ctx, store.NewTurn{OwnerID: u.ID, ConversationID: conv.ID, Input: toolmark.TurnInput{Content: strings.Repeat("é", 512)}}); err != nil {
		t.Errorf("content at the limit: %v", err)
	}
}

func TestBadIDsAndContent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, store.WithMaxContentBytes(1024))
	db := f.db
	const missing = "00000000-0000-0000-0000-000000000000"
	for _, id := range []string{missing, "not-a-uuid", "", "\xff\x00"} {
		_, err := db.TurnByID(ctx, id)
		wantCode(t, "TurnByID", err, toolmark.ENOTFOUND)
		_, err = db.EventsAfter(ctx, id, 0, 10)
		wantCode(t, "EventsAfter", err, toolmark.ENOTFOUND)
		_, _, err = db.Snapshot(ctx, id)
		wantCode(t, "Snapshot", err, toolmark.ENOTFOUND)
		wantCode(t, "AcquireLease", db.AcquireLease(ctx, id, "r", time.Second), toolmark.ENOTFOUND)
		wantCode(t, "ReleaseLease", db.ReleaseLease(ctx, id, testOwner), toolmark.ENOTFOUND)
		_, err = db.Todos(ctx, id)
		wantCode(t, "Todos", err, toolmark.ENOTFOUND)
		_, err = db.TurnContext(ctx, id, f.turn.ID)
		wantCode(t, "TurnContext", err, toolmark.ENOTFOUND)
		// A turn that cannot exist is not found; one that does not is
		// not held.
		code := toolmark.ENOTFOUND
		if id == missing || id == "not-a-uuid" {
			code = toolmark.ECONFLICT
		}
		w := write(t, toolmark.Turn{ID: id, AssistantMessageID: id}, 0,
			toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}})
		content := "x"
		w.Content = &content
		w.ToolCalls = []toolmark.ToolCallRecord{{ID: "c1", Name: "x", Status: "pending"}}
		w.Todos = &[]toolmark.Todo{}
		wantRefused(t, "Commit", db.Commit(ctx, testOwner, []store.TurnWrite{w}), map[string]string{id: code})
	}
	_, err := db.CreateConversation(ctx, f.user.ID, "bad\x00title")
	wantCode(t, "CreateConversation(NUL)", err, toolmark.EINVALID)
	_, err = db.CreateConversation(ctx, missing, "t")
	wantCode(t, "CreateConversation(unknown owner)", err, toolmark.ENOTFOUND)

	if n := count(t, db, "select count(*) from events"); n != 0 {
		t.Errorf("got %d events written, want 0", n)
	}
	if n := count(t, db, "select count(*) from tool_calls"); n != 0 {
		t.Errorf("got %d tool calls written, want 0", n)
	}
	if c, seq, _ := db.Snapshot(ctx, f.turn.ID); c != "" || seq != 0 {
		t.Errorf("got snapshot %q at %d, want it untouched", c, seq)
	}
	if n := count(t, db, "select count(*) from conversations"); n != 1 {
		t.Errorf("got %d conversations, want 1", n)
	}
}

func TestCreateTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db

	if f.turn.Status != toolmark.TurnQueued || f.turn.LastSeq != 0 {
		t.Errorf("new turn: got status %s seq %d, want queued 0", f.turn.Status, f.turn.LastSeq)
	}
	ms, err := db.ListMessages(ctx, f.user.ID, f.conv.ID)
	if err != nil || len(ms) != 2 {
		t.Fatalf("ListMessages = %v, %v; want 2 messages", ms, err)
	}
	if ms[0].Role != toolmark.RoleUser || ms[0].Content != "hello" || ms[0].Status != toolmark.MessageComplete || ms[0].ID != f.turn.UserMessageID {
		t.Errorf("user message: got %+v", ms[0])
	}
	if ms[1].Role != toolmark.RoleAssistant || ms[1].Content != "" || ms[1].Status != toolmark.MessageStreaming || ms[1].ID != f.turn.AssistantMessageID {
		t.Errorf("assistant message: got %+v", ms[1])
	}

	// A second turn while one is active is a conflict.
	_, _, err = db.CreateTurn(ctx, store.NewTurn{OwnerID: f.user.ID, ConversationID: f.conv.ID, Input: toolmark.TurnInput{Content: "again"}})
	wantCode(t, "CreateTurn while active", err, toolmark.ECONFLICT)
	wantCode(t, "DeleteConversation while active", db.DeleteConversation(ctx, f.user.ID, f.conv.ID), toolmark.ECONFLICT)

	if f.turn.LeaseOwner != testOwner || f.turn.LeaseExpiresAt == nil {
		t.Errorf("new turn: got lease %q until %v, want %q", f.turn.LeaseOwner, f.turn.LeaseExpiresAt, testOwner)
	}
	// A non-final status does not end a turn.
	err = db.Commit(ctx, testOwner, []store.TurnWrite{finishWrite(t, f.turn, 0, toolmark.TurnRunning, "", "")})
	wantRefused(t, "finishing as running", err, map[string]string{f.turn.ID: toolmark.EINVALID})
	mustFinish(t, db, f.turn, toolmark.TurnCompleted, "", "the answer")
	err = db.Commit(ctx, testOwner, []store.TurnWrite{finishWrite(t, f.turn, 1, toolmark.TurnFailed, "x", "y")})
	wantLeaseLost(t, "finishing twice", err, f.turn.ID)
	err = db.Commit(ctx, testOwner, []store.TurnWrite{write(t, f.turn, 1, toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{}})})
	wantLeaseLost(t, "Commit after finish", err, f.turn.ID)

	// Idempotency key: the same key gives the same turn.
	nt := store.NewTurn{OwnerID: f.user.ID, ConversationID: f.conv.ID, Input: toolmark.TurnInput{Content: "second"}, IdempotencyKey: "k1", LeaseOwner: testOwner, LeaseTTL: time.Hour}
	t2, created, err := db.CreateTurn(ctx, nt)
	if err != nil || !created {
		t.Fatalf("CreateTurn(k1) = %v, created %v", err, created)
	}
	again, created, err := db.CreateTurn(ctx, nt)
	if err != nil || created || again.ID != t2.ID {
		t.Fatalf("CreateTurn(k1) again = %s, created %v, %v; want %s, false, nil", again.ID, created, err, t2.ID)
	}
	mustFinish(t, db, t2, toolmark.TurnFailed, "boom", "partial")
	again, created, err = db.CreateTurn(ctx, nt)
	if err != nil || created || again.ID != t2.ID || again.Status != toolmark.TurnFailed {
		t.Fatalf("CreateTurn(k1) after finish = %+v, created %v, %v; want the failed turn", again, created, err)
	}
	t3 := mustTurn(t, db, f.user.ID, f.conv.ID, "third")

	hist, err := db.ConversationHistory(ctx, f.conv.ID, t3.ID)
	if err != nil || len(hist) != 2 {
		t.Fatalf("ConversationHistory = %+v, %v; want 2 turns", hist, err)
	}
	if hist[0].UserText != "hello" || hist[0].AssistantContent != "the answer" || hist[0].Status != toolmark.TurnCompleted ||
		hist[1].UserText != "second" || hist[1].Status != toolmark.TurnFailed {
		t.Errorf("got history %+v", hist)
	}
	if hist, _ := db.ConversationHistory(ctx, f.conv.ID, t2.ID); len(hist) != 1 {
		t.Errorf("history before the second turn: got %d turns, want 1", len(hist))
	}
	if n := count(t, db, "select count(*) from turns where status in ('queued', 'running')"); n != 1 || t3.Status != toolmark.TurnQueued {
		t.Errorf("got %d active turns (the third %s), want the third, queued", n, t3.Status)
	}
	ms, _ = db.ListMessages(ctx, f.user.ID, f.conv.ID)
	if len(ms) != 6 || ms[1].Status != toolmark.MessageComplete || ms[3].Status != toolmark.MessageFailed || ms[4].Content != "third" {
		t.Errorf("messages out of order or wrong status: %+v", ms)
	}
	cs, _ := db.ListConversations(ctx, f.user.ID)
	if len(cs) != 1 {
		t.Errorf("got %d conversations, want 1", len(cs))
	}
	mustFinish(t, db, t3, toolmark.TurnCancelled, "cancelled by the user", "")
	if err := db.DeleteConversation(ctx, f.user.ID, f.conv.ID); err != nil {
		t.Fatal(err)
	}
	wantNoRows(t, db, "after delete", "conversations", "messages", "turns")
}

func TestLeases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	id := mustTurnAs(t, db, "", f.user.ID, mustConversation(t, db, f.user.ID).ID, "unleased").ID
	renew := func(owner string, ttl time.Duration) bool {
		held, _, err := db.RenewLeases(ctx, owner, ttl, []string{id})
		if err != nil {
			t.Fatal(err)
		}
		return slices.Equal(held, []string{id})
	}
	if err := db.AcquireLease(ctx, id, "a", time.Minute); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "AcquireLease held by a", db.AcquireLease(ctx, id, "b", time.Minute), toolmark.ECONFLICT)
	if renew("b", time.Minute) {
		t.Error("b renewed a's lease")
	}
	if !renew("a", time.Millisecond) {
		t.Fatal("a could not renew its lease")
	}
	time.Sleep(5 * time.Millisecond)
	if err := db.AcquireLease(ctx, id, "b", time.Minute); err != nil {
		t.Fatalf("AcquireLease after expiry: %v", err)
	}
	if renew("a", time.Minute) {
		t.Error("a renewed the lease after b took it")
	}
	if err := db.ReleaseLease(ctx, id, "a"); err != nil {
		t.Fatal(err)
	}
	if tu, _ := db.TurnByID(ctx, id); tu.LeaseOwner != "b" || tu.LeaseExpiresAt == nil {
		t.Fatalf("release by a non-holder changed the lease: %+v", tu)
	}
	if err := db.ReleaseLease(ctx, id, "b"); err != nil {
		t.Fatal(err)
	}
	if tu, _ := db.TurnByID(ctx, id); tu.LeaseOwner != "" || tu.LeaseExpiresAt != nil {
		t.Fatalf("lease still held after release: %+v", tu)
	}
	wantCode(t, "ReleaseLease(unknown turn)", db.ReleaseLease(ctx, "00000000-0000-0000-0000-000000000000", "a"), toolmark.ENOTFOUND)

	if err := db.AcquireLease(ctx, id, testOwner, time.Minute); err != nil {
		t.Fatal(err)
	}
	tu, err := db.RequestCancel(ctx, f.user.ID, id)
	if err != nil || tu.ID != id {
		t.Fatal(err)
	}
	if _, err := db.RequestCancel(ctx, f.user.ID, id); err != nil {
		t.Fatalf("second RequestCancel: %v", err)
	}
	if _, cancel, err := db.RenewLeases(ctx, testOwner, time.Minute, []string{id}); err != nil || !slices.Equal(cancel, []string{id}) {
		t.Fatalf("RenewLeases = cancel %v, %v; want the cancel request", cancel, err)
	}
	mustFinish(t, db, tu, toolmark.TurnCancelled, "cancelled by the user", "")
	wantCode(t, "AcquireLease on a finished turn", db.AcquireLease(ctx, id, "a", time.Minute), toolmark.ECONFLICT)
	// A cancel request after the end changes nothing.
	if got, err := db.RequestCancel(ctx, f.user.ID, id); err != nil || got.Status != toolmark.TurnCancelled {
		t.Errorf("RequestCancel after the end = %+v, %v; want the cancelled turn", got, err)
	}
}

// TestToolCallsAndTodos writes tool-call rows and a task list through
// Commit: the first final outcome of a call wins, empty arguments keep the
// stored ones, and the task list is replaced as a whole.
func TestToolCallsAndTodos(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	commit := func(recs []toolmark.ToolCallRecord, todos *[]toolmark.Todo) {
		t.Helper()
		w := write(t, f.turn, lastSeq(t, db, f.turn.ID), toolmark.Draft{Type: toolmark.EventRoundStarted, Data: toolmark.RoundStartedData{Round: 1}})
		w.ToolCalls, w.Todos = recs, todos
		mustCommitAs(t, db, testOwner, w)
	}
	rec := toolmark.ToolCallRecord{ID: "c1", Name: "search_documents", Status: "pending", Arguments: []byte(`{"query":"go"}`)}
	commit([]toolmark.ToolCallRecord{rec, {ID: "c2", Name: "fetch", ParentID: "c1"}}, nil)
	now := time.Now()
	rec.Status, rec.Result, rec.FinishedAt, rec.Arguments = "success", "3 hits", &now, nil
	commit([]toolmark.ToolCallRecord{rec}, nil)
	rec.Status, rec.Error, rec.Result = "error", "late", ""
	commit([]toolmark.ToolCallRecord{rec}, nil)
	got, err := db.ToolCalls(ctx, f.turn.ID)
	if err != nil || len(got) != 2 {
		t.Fatalf("ToolCalls = %v, %v", got, err)
	}
	if got[0].ID != "c1" || got[0].Status != "success" || got[0].Result != "3 hits" || got[0].Error != "" ||
		string(got[0].Arguments) != `{"query":"go"}` || got[0].FinishedAt == nil {
		t.Errorf("got %+v, want the first final outcome with the original arguments", got[0])
	}
	if got[1].ID != "c2" || got[1].ParentID != "c1" || got[1].Status != "pending" || got[1].Arguments != nil {
		t.Errorf("got %+v, want c2 pending under c1, without arguments", got[1])
	}

	if todos, err := db.Todos(ctx, f.turn.ID); err != nil || len(todos) != 0 {
		t.Fatalf("Todos before set = %v, %v; want empty", todos, err)
	}
	want := []toolmark.Todo{{Text: "read", Status: toolmark.TodoDone}, {Text: "write", Status: toolmark.TodoInProgress}}
	commit(nil, &want)
	commit(nil, nil) // no change
	todos, err := db.Todos(ctx, f.turn.ID)
	if err != nil || !slices.Equal(todos, want) {
		t.Fatalf("Todos = %v, %v; want %v", todos, err, want)
	}
	commit(nil, &[]toolmark.Todo{})
	if todos, err := db.Todos(ctx, f.turn.ID); err != nil || len(todos) != 0 {
		t.Fatalf("Todos after clearing = %v, %v; want empty", todos, err)
	}
	// Tool calls and todos do not reference their turn (sql/009): deleting
	// the conversation still deletes them, with the turn and its events.
	if _, err := db.Pool().Exec(ctx, `delete from conversations`); err != nil {
		t.Fatal(err)
	}
	wantNoRows(t, db, "after deleting the conversation", "events", "tool_calls", "todos", "turns", "messages")
}

// TestCreateTurnConcurrent creates turns in one conversation from 8
// goroutines: with one idempotency key they all get the same turn; with
// different keys exactly one is created and the others conflict.
func TestCreateTurnConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFixture(t).db
	u := mustUser(t, db, "gina")
	for _, sameKey := range []bool{true, false} {
		conv := mustConversation(t, db, u.ID)
		var wg sync.WaitGroup
		var mu sync.Mutex
		ids := map[string]int{}
		created, conflicts := 0, 0
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				key := "same"
				if !sameKey {
					key = fmt.Sprint("key", i)
				}
				tu, c, err := db.CreateTurn(ctx, store.NewTurn{OwnerID: u.ID, ConversationID: conv.ID, Input: toolmark.TurnInput{Content: "hi"}, IdempotencyKey: key})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					ids[tu.ID]++
					if c {
						created++
					}
				case toolmark.ErrorCode(err) == toolmark.ECONFLICT:
					conflicts++
				default:
					t.Errorf("CreateTurn: %v", err)
				}
			}()
		}
		wg.Wait()
		if created != 1 || len(ids) != 1 {
			t.Errorf("same key %v: %d created, %d distinct turns; want 1 and 1", sameKey, created, len(ids))
		}
		if want := map[bool]int{true: 0, false: 7}[sameKey]; conflicts != want {
			t.Errorf("same key %v: got %d conflicts, want %d", sameKey, conflicts, want)
		}
		if n := count(t, db, "select count(*) from messages where conversation_id = $1", conv.ID); n != 2 {
			t.Errorf("same key %v: got %d messages, want 2", sameKey, n)
		}
	}
}

// TestCreateTurns: a group of new turns is written by one statement; the
// ones it cannot create outright get CreateTurn's own answer.
func TestCreateTurns(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	u, other := mustUser(t, db, "alice"), mustUser(t, db, "bob")
	queued := func() *toolmark.Event {
		return &toolmark.Event{Type: toolmark.EventTurnQueued, Data: []byte(`{"position":0}`), Time: time.Now().UTC().Truncate(time.Microsecond)}
	}
	nt := func(owner, conv, key string) store.NewTurn {
		return store.NewTurn{OwnerID: owner, ConversationID: conv, Input: toolmark.TurnInput{Content: "hi"}, IdempotencyKey: key,
			LeaseOwner: "creator", LeaseTTL: time.Minute, Queued: queued()}
	}
	var in []store.NewTurn
	var convs []string
	for range 20 {
		c := mustConversation(t, db, u.ID)
		convs = append(convs, c.ID)
		in = append(in, nt(u.ID, c.ID, ""))
	}
	busy := mustConversation(t, db, u.ID)
	first := db.CreateTurns(ctx, []store.NewTurn{nt(u.ID, busy.ID, "k1")})[0]
	if first.Err != nil || !first.Created {
		t.Fatalf("first turn: %+v", first)
	}
	in = append(in,
		nt(u.ID, convs[0], ""),       // a second turn for the same conversation in the group
		nt(u.ID, busy.ID, "k1"),      // a retry of the active turn's request
		nt(u.ID, busy.ID, "k2"),      // a new turn while one is active
		nt(other.ID, convs[1], ""),   // another user's conversation
		nt(u.ID, "not-a-uuid", ""),   // an unknown conversation
		store.NewTurn{OwnerID: u.ID}, // no content
	)
	out := db.CreateTurns(ctx, in)
	if len(out) != len(in) {
		t.Fatalf("%d results for %d inputs", len(out), len(in))
	}
	for i := range 20 {
		r := out[i]
		if r.Err != nil || !r.Created || r.Turn.ConversationID != convs[i] || r.Turn.LastSeq != 1 || r.Turn.LeaseOwner != "creator" {
			t.Errorf("turn %d: %+v", i, r)
		}
		evs, err := db.EventsAfter(ctx, r.Turn.ID, 0, 10)
		if err != nil || len(evs) != 1 || evs[0].Type != toolmark.EventTurnQueued || evs[0].Seq != 1 {
			t.Errorf("turn %d events: %v %+v", i, err, evs)
		}
	}
	wantCode(t, "second turn in one conversation", out[20].Err, toolmark.ECONFLICT)
	if r := out[21]; r.Err != nil || r.Created || r.Turn.ID != first.Turn.ID {
		t.Errorf("retry: %+v, want the first turn, not created", r)
	}
	wantCode(t, "turn while one is active", out[22].Err, toolmark.ECONFLICT)
	wantCode(t, "another user's conversation", out[23].Err, toolmark.ENOTFOUND)
	wantCode(t, "unknown conversation", out[24].Err, toolmark.ENOTFOUND)
	wantCode(t, "no content", out[25].Err, toolmark.ENOTFOUND)
	if n := count(t, db, `select count(*) from messages`); n != 2*21 {
		t.Errorf("%d messages, want %d (none for refused turns)", n, 2*21)
	}
	if n := count(t, db, `select count(distinct xmin::text) from turns where id = any($1)`, []string{out[0].Turn.ID, out[19].Turn.ID}); n != 1 {
		t.Errorf("the group's turns were written by %d transactions, want 1", n)
	}
}

// TestCreateTurnsReplacesAndAttaches: one group carries a retry with an
// attachment, its repeat, a retry of a question replaced already and a
// turn without a lease; each gets what CreateTurn alone would give.
func TestCreateTurnsReplacesAndAttaches(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	u := mustUser(t, db, "alice")
	c1, c2, c3 := mustConversation(t, db, u.ID), mustConversation(t, db, u.ID), mustConversation(t, db, u.ID)
	first, second := mustTurnAs(t, db, "", u.ID, c1.ID, "one"), mustTurnAs(t, db, "", u.ID, c2.ID, "two")
	if _, err := db.Pool().Exec(ctx, `update turns set status = 'completed', finished_at = now() where id = any($1)`,
		[]string{first.ID, second.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, `update messages set replaced_by = $1 where id = $2`, second.ID, second.UserMessageID); err != nil {
		t.Fatal(err)
	}
	up, err := db.CreateUpload(ctx, u.ID, "a.txt", "text/plain", []byte("a"), 0)
	if err != nil {
		t.Fatal(err)
	}
	retry := store.NewTurn{OwnerID: u.ID, ConversationID: c1.ID, Replaces: first.UserMessageID, IdempotencyKey: "r",
		Input: toolmark.TurnInput{Content: "one, again", Attachments: []string{up.ID}}, LeaseOwner: "creator", LeaseTTL: time.Minute,
		Queued: &toolmark.Event{Type: toolmark.EventTurnQueued, Data: []byte(`{}`), Time: time.Now()}}
	out := db.CreateTurns(ctx, []store.NewTurn{
		retry,
		retry,
		{OwnerID: u.ID, ConversationID: c2.ID, Replaces: second.UserMessageID, Input: toolmark.TurnInput{Content: "x"}},
		{OwnerID: u.ID, ConversationID: c3.ID, Input: toolmark.TurnInput{Content: "plain"}},
	})
	if r := out[0]; r.Err != nil || !r.Created || r.Turn.LastSeq != 1 || r.Turn.LeaseOwner != "creator" {
		t.Fatalf("retry: %+v", r)
	}
	if r := out[1]; r.Err != nil || r.Created || r.Turn.ID != out[0].Turn.ID {
		t.Errorf("the retry repeated: %+v, want the first, not created", r)
	}
	wantCode(t, "replacing a replaced question", out[2].Err, toolmark.ENOTFOUND)
	if r := out[3]; r.Err != nil || !r.Created || r.Turn.LastSeq != 0 || r.Turn.LeaseOwner != "" {
		t.Errorf("turn without a lease: %+v", r)
	}
	if n := count(t, db, `select count(*) from messages where id = any($1) and replaced_by = $2`,
		[]string{first.UserMessageID, first.AssistantMessageID}, out[0].Turn.ID); n != 2 {
		t.Errorf("%d messages replaced by the retry, want 2", n)
	}
	if n := count(t, db, `select count(*) from messages where id = $1 and version_of = $2`, out[0].Turn.UserMessageID, first.UserMessageID); n != 1 {
		t.Errorf("the new question is not a version of the first")
	}
	got, err := db.MessageAttachments(ctx, []string{out[0].Turn.UserMessageID})
	if err != nil || len(got[out[0].Turn.UserMessageID]) != 1 {
		t.Errorf("attachments of the retry: %+v, %v", got, err)
	}
	if n := count(t, db, `select count(*) from messages where conversation_id = $1`, c2.ID); n != 2 {
		t.Errorf("%d messages in the refused conversation, want 2", n)
	}
}
