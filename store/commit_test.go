package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
)

// TestCommitContentMovesForward commits a write whose events come before
// the stored content's: the content keeps the newer seq.
func TestCommitContentMovesForward(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	text := func(s string) toolmark.Draft {
		return toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: s}}
	}
	late := write(t, f.turn, 3, text("four"), text("five"))
	atFive := "at five"
	late.Content = &atFive
	mustCommitAs(t, f.db, testOwner, late)
	early := write(t, f.turn, 0, text("one"), text("two"), text("three"))
	atThree := "at three"
	early.Content = &atThree
	mustCommitAs(t, f.db, testOwner, early)
	if c, seq, _ := f.db.Snapshot(ctx, f.turn.ID); c != "at five" || seq != 5 {
		t.Errorf("got %q at %d, want \"at five\" at 5", c, seq)
	}
	if es, _ := f.db.EventsAfter(ctx, f.turn.ID, 0, 0); len(es) != 5 {
		t.Errorf("got %d events, want 5", len(es))
	}
	// The same seq again replaces the content.
	again := write(t, f.turn, 5, text("six"))
	atSix := "at six"
	again.Content = &atSix
	mustCommitAs(t, f.db, testOwner, again)
	if c, seq, _ := f.db.Snapshot(ctx, f.turn.ID); c != "at six" || seq != 6 {
		t.Errorf("got %q at %d, want \"at six\" at 6", c, seq)
	}
}

// TestCommit writes a turn's start, events, content, tool calls and todos,
// then ends it: the terminal event, the final content, the turn's status
// and its released lease commit together, and nothing is written after.
func TestCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	w := write(t, f.turn, 0,
		toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}},
		toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "partial"}})
	w.Started = true
	content := "partial"
	w.Content = &content
	w.ToolCalls = []toolmark.ToolCallRecord{{ID: "c1", Name: "search_documents", Arguments: []byte(`{"query":"go"}`)}}
	w.Todos = &[]toolmark.Todo{{Text: "look", Status: toolmark.TodoInProgress}}
	mustCommitAs(t, db, testOwner, w)
	tu, _ := db.TurnByID(ctx, f.turn.ID)
	if tu.Status != toolmark.TurnRunning || tu.StartedAt == nil || tu.LastSeq != 2 || tu.LeaseOwner != testOwner {
		t.Errorf("got turn %+v, want running at seq 2, leased", tu)
	}
	if c, seq, _ := db.Snapshot(ctx, f.turn.ID); c != "partial" || seq != 2 {
		t.Errorf("got snapshot %q at %d, want \"partial\" at 2", c, seq)
	}
	if recs, _ := db.ToolCalls(ctx, f.turn.ID); len(recs) != 1 || recs[0].Status != "pending" || recs[0].TurnID != f.turn.ID || string(recs[0].Arguments) != `{"query":"go"}` {
		t.Errorf("got tool calls %+v, want c1 pending with its arguments", recs)
	}
	if todos, _ := db.Todos(ctx, f.turn.ID); len(todos) != 1 || todos[0].Text != "look" {
		t.Errorf("got todos %v, want [look]", todos)
	}

	end := finishWrite(t, f.turn, 2, toolmark.TurnCompleted, "", "partial, done")
	now := time.Now()
	end.ToolCalls = []toolmark.ToolCallRecord{{ID: "c1", Name: "search_documents", Status: "success", Result: "2 hits", FinishedAt: &now}}
	mustCommitAs(t, db, testOwner, end)
	tu, _ = db.TurnByID(ctx, f.turn.ID)
	if tu.Status != toolmark.TurnCompleted || tu.LastSeq != 3 || tu.FinishedAt == nil || tu.LeaseOwner != "" || tu.LeaseExpiresAt != nil || tu.Error != "" {
		t.Errorf("got turn %+v, want completed at seq 3, without lease", tu)
	}
	ms, _ := db.ListMessages(ctx, f.user.ID, f.conv.ID)
	if ms[1].Content != "partial, done" || ms[1].Seq != 3 || ms[1].Status != toolmark.MessageComplete {
		t.Errorf("got message %+v, want the final content at seq 3, complete", ms[1])
	}
	if recs, _ := db.ToolCalls(ctx, f.turn.ID); len(recs) != 1 || recs[0].Status != "success" || string(recs[0].Arguments) != `{"query":"go"}` {
		t.Errorf("got tool calls %+v, want c1 success with its arguments", recs)
	}
	// The terminal event, the final content and the turn's end are one
	// transaction.
	if n := count(t, db, `
		select count(distinct x) from (
			select e.xmin::text as x from events e join turns t on t.num = e.turn where t.id = $1 and e.seq = 3
			union all select xmin::text from messages where id = $2
			union all select xmin::text from turns where id = $1
		) rows`, f.turn.ID, f.turn.AssistantMessageID); n != 1 {
		t.Errorf("the end of the turn spans %d transactions, want 1", n)
	}

	// Nothing is written once the turn is final.
	late := write(t, f.turn, 3, toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "late"}})
	lateContent := "late"
	late.Content = &lateContent
	late.Todos = &[]toolmark.Todo{}
	late.ToolCalls = []toolmark.ToolCallRecord{{ID: "c2", Name: "late"}}
	wantLeaseLost(t, "Commit after finish", db.Commit(ctx, testOwner, []store.TurnWrite{late}), f.turn.ID)
	if n := storedEvents(t, db, ""); n != 3 {
		t.Errorf("got %d events, want 3", n)
	}
	if c, seq, _ := db.Snapshot(ctx, f.turn.ID); c != "partial, done" || seq != 3 {
		t.Errorf("got snapshot %q at %d after a refused write", c, seq)
	}
	if recs, _ := db.ToolCalls(ctx, f.turn.ID); len(recs) != 1 {
		t.Errorf("got %d tool calls after a refused write, want 1", len(recs))
	}
	if todos, _ := db.Todos(ctx, f.turn.ID); len(todos) != 1 {
		t.Errorf("got todos %v after a refused write, want [look]", todos)
	}
}

// TestCommitFinishStatuses ends four turns in one Commit, one per final
// status: each message gets the matching status.
func TestCommitFinishStatuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	tests := []struct {
		status toolmark.TurnStatus
		err    string
		msg    toolmark.MessageStatus
	}{
		{toolmark.TurnCompleted, "", toolmark.MessageComplete},
		{toolmark.TurnFailed, "boom", toolmark.MessageFailed},
		{toolmark.TurnCancelled, "cancelled by the user", toolmark.MessageCancelled},
		{toolmark.TurnInterrupted, "interrupted", toolmark.MessageInterrupted},
	}
	var ws []store.TurnWrite
	var convs []toolmark.Conversation
	for _, tt := range tests {
		conv := mustConversation(t, db, f.user.ID)
		convs = append(convs, conv)
		tu := mustTurn(t, db, f.user.ID, conv.ID, "q")
		ws = append(ws, finishWrite(t, tu, 0, tt.status, tt.err, "answer "+string(tt.status)))
	}
	mustCommitAs(t, db, testOwner, ws...)
	for i, tt := range tests {
		t.Run(string(tt.status), func(t *testing.T) {
			tu, _ := db.TurnByID(ctx, ws[i].TurnID)
			if tu.Status != tt.status || tu.Error != tt.err || tu.LastSeq != 1 || tu.LeaseOwner != "" {
				t.Errorf("got turn %+v, want %s %q at seq 1 without lease", tu, tt.status, tt.err)
			}
			ms, _ := db.ListMessages(ctx, f.user.ID, convs[i].ID)
			if ms[1].Status != tt.msg || ms[1].Content != "answer "+string(tt.status) || ms[1].Seq != 1 {
				t.Errorf("got message %+v, want %s", ms[1], tt.msg)
			}
		})
	}
}

// TestCommitRefusesInvalidWrites gives Commit, for each kind of invalid
// write, an invalid write of one turn and a valid write of another: the
// invalid one is refused with its error and nothing of it is written; the
// valid one is committed.
func TestCommitRefusesInvalidWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, store.WithMaxContentBytes(1024))
	db := f.db
	str := func(s string) *string { return &s }
	text := toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "ok"}}
	tests := []struct {
		name  string
		spoil func(w *store.TurnWrite)
		code  string
	}{
		{"content not UTF-8", func(w *store.TurnWrite) { w.Content = str("caf\xe9") }, toolmark.EINVALID},
		{"content with NUL", func(w *store.TurnWrite) { w.Content = str("a\x00b") }, toolmark.EINVALID},
		{"content too large", func(w *store.TurnWrite) { w.Content = str(strings.Repeat("a", 1025)) }, toolmark.ETOOLARGE},
		{"final content too large", func(w *store.TurnWrite) {
			w.Content, w.Finish = str(strings.Repeat("é", 513)), &store.Finish{Status: toolmark.TurnCompleted}
		}, toolmark.ETOOLARGE},
		{"no events", func(w *store.TurnWrite) { w.Events = nil }, toolmark.EINVALID},
		{"no event type", func(w *store.TurnWrite) { w.Events[0].Type = "" }, toolmark.EINVALID},
		{"unknown event type", func(w *store.TurnWrite) { w.Events[0].Type = "text_deltas" }, toolmark.EINVALID},
		{"event seq past an integer", func(w *store.TurnWrite) { w.Events[0].Seq = 1 << 31 }, toolmark.EINVALID},
		{"event data with NUL", func(w *store.TurnWrite) { w.Events[0].Data = []byte("{\"text\":\"a\x00\"}") }, toolmark.EINVALID},
		{"event data not UTF-8", func(w *store.TurnWrite) { w.Events[0].Data = []byte("{\"text\":\"\xff\"}") }, toolmark.EINVALID},
		{"event data too large", func(w *store.TurnWrite) {
			w.Events[0].Data = mustJSON(t, toolmark.TextDeltaData{Text: strings.Repeat("a", 1025)})
		}, toolmark.ETOOLARGE},
		{"event data not JSON", func(w *store.TurnWrite) { w.Events[0].Data = []byte("{bad") }, toolmark.EINVALID},
		{"finish without content", func(w *store.TurnWrite) { w.Finish = &store.Finish{Status: toolmark.TurnCompleted} }, toolmark.EINVALID},
		{"finish not final", func(w *store.TurnWrite) {
			w.Content, w.Finish = str("x"), &store.Finish{Status: toolmark.TurnRunning}
		}, toolmark.EINVALID},
		{"finish error with NUL", func(w *store.TurnWrite) {
			w.Content, w.Finish = str("x"), &store.Finish{Status: toolmark.TurnFailed, Error: "a\x00"}
		}, toolmark.EINVALID},
		{"todo with NUL", func(w *store.TurnWrite) { w.Todos = &[]toolmark.Todo{{Text: "a\x00", Status: toolmark.TodoPending}} }, toolmark.EINVALID},
		{"tool call without id", func(w *store.TurnWrite) { w.ToolCalls = []toolmark.ToolCallRecord{{Name: "x"}} }, toolmark.EINVALID},
		{"tool call arguments not JSON", func(w *store.TurnWrite) {
			w.ToolCalls = []toolmark.ToolCallRecord{{ID: "c1", Name: "x", Arguments: []byte("{")}}
		}, toolmark.EINVALID},
		{"tool call result not UTF-8", func(w *store.TurnWrite) {
			w.ToolCalls = []toolmark.ToolCallRecord{{ID: "c1", Name: "x", Result: "\xc3"}}
		}, toolmark.EINVALID},
		{"tool call status unknown", func(w *store.TurnWrite) {
			w.ToolCalls = []toolmark.ToolCallRecord{{ID: "c1", Name: "x", Status: "done"}}
		}, toolmark.EINVALID},
		{"malformed message id", func(w *store.TurnWrite) { w.MessageID = "\xff\x00" }, toolmark.ENOTFOUND},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := mustTurn(t, db, f.user.ID, mustConversation(t, db, f.user.ID).ID, "bad")
			good := mustTurn(t, db, f.user.ID, mustConversation(t, db, f.user.ID).ID, "good")
			bw := write(t, bad, 0, text)
			bw.Started = true
			tt.spoil(&bw)
			gw := write(t, good, 0, text)
			gw.Content = str("good")
			err := db.Commit(ctx, testOwner, []store.TurnWrite{bw, gw})
			wantRefused(t, "Commit", err, map[string]string{bad.ID: tt.code})
			if es, _ := db.EventsAfter(ctx, good.ID, 0, 0); len(es) != 1 {
				t.Errorf("the valid write: got %d events, want 1", len(es))
			}
			if c, seq, _ := db.Snapshot(ctx, good.ID); c != "good" || seq != 1 {
				t.Errorf("the valid write: got snapshot %q at %d, want \"good\" at 1", c, seq)
			}
			if es, _ := db.EventsAfter(ctx, bad.ID, 0, 0); len(es) != 0 {
				t.Errorf("the invalid write: got %d events written, want 0", len(es))
			}
			got, _ := db.TurnByID(ctx, bad.ID)
			if got.Status != toolmark.TurnQueued {
				t.Errorf("the invalid write: got turn status %s, want queued", got.Status)
			}
			if c, seq, _ := db.Snapshot(ctx, bad.ID); c != "" || seq != 0 {
				t.Errorf("the invalid write: got snapshot %q at %d, want it untouched", c, seq)
			}
			if n := count(t, db, "select count(*) from tool_calls where turn_id = $1", bad.ID); n != 0 {
				t.Errorf("the invalid write: got %d tool calls written, want 0", n)
			}
			if n := count(t, db, "select count(*) from todos where turn_id = $1", bad.ID); n != 0 {
				t.Errorf("the invalid write: got todos written")
			}
		})
	}
}

// TestCommitLeaseLost commits writes for turns this owner does not hold
// (another owner's, a released one, an unknown one) or that are final,
// together with a turn it does hold: those are refused with ErrLeaseLost
// and get nothing written; the held one commits.
func TestCommitLeaseLost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	newTurn := func(leaseOwner string) toolmark.Turn {
		return mustTurnAs(t, db, leaseOwner, f.user.ID, mustConversation(t, db, f.user.ID).ID, "q")
	}
	mine := f.turn
	theirs := newTurn(newOwner("other"))
	released := newTurn(testOwner)
	if err := db.ReleaseLease(ctx, released.ID, testOwner); err != nil {
		t.Fatal(err)
	}
	done := newTurn(testOwner)
	mustFinish(t, db, done, toolmark.TurnCompleted, "", "the answer")
	// A lease that expired but that nobody took over is still held.
	expired := newTurn(testOwner)
	if err := db.AcquireLease(ctx, expired.ID, testOwner, time.Microsecond); err != nil {
		t.Fatal(err)
	}
	missing := toolmark.Turn{ID: "00000000-0000-0000-0000-000000000000", AssistantMessageID: "00000000-0000-0000-0000-000000000000"}

	var ws []store.TurnWrite
	for _, tu := range []toolmark.Turn{mine, theirs, released, done, expired, missing} {
		w := write(t, tu, lastSeq0(t, db, tu.ID),
			toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}},
			toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "mine"}})
		w.Started = true
		content := "mine"
		w.Content = &content
		w.ToolCalls = []toolmark.ToolCallRecord{{ID: "c1", Name: "x"}}
		w.Todos = &[]toolmark.Todo{{Text: "t", Status: toolmark.TodoPending}}
		ws = append(ws, w)
	}
	ws[1].Finish = &store.Finish{Status: toolmark.TurnFailed, Error: "stolen"}
	err := db.Commit(ctx, testOwner, ws)
	wantLeaseLost(t, "Commit", err, theirs.ID, released.ID, done.ID, missing.ID)
	for _, tu := range []toolmark.Turn{mine, expired} {
		got, _ := db.TurnByID(ctx, tu.ID)
		if got.Status != toolmark.TurnRunning || got.LastSeq != 2 {
			t.Errorf("held turn: got status %s seq %d, want running at 2", got.Status, got.LastSeq)
		}
		if c, _, _ := db.Snapshot(ctx, tu.ID); c != "mine" {
			t.Errorf("held turn: got content %q, want \"mine\"", c)
		}
	}
	for _, tu := range []toolmark.Turn{theirs, released} {
		got, _ := db.TurnByID(ctx, tu.ID)
		if got.Status != toolmark.TurnQueued || got.LastSeq != 0 {
			t.Errorf("turn not held: got status %s seq %d, want queued at 0", got.Status, got.LastSeq)
		}
		if c, seq, _ := db.Snapshot(ctx, tu.ID); c != "" || seq != 0 {
			t.Errorf("turn not held: got content %q at %d, want it untouched", c, seq)
		}
	}
	if got, _ := db.TurnByID(ctx, theirs.ID); got.LeaseOwner == testOwner {
		t.Errorf("the other owner's lease changed hands: %+v", got)
	}
	if got, _ := db.TurnByID(ctx, done.ID); got.Status != toolmark.TurnCompleted || got.LastSeq != 1 {
		t.Errorf("final turn: got status %s seq %d, want completed at 1", got.Status, got.LastSeq)
	}
	if c, seq, _ := db.Snapshot(ctx, done.ID); c != "the answer" || seq != 1 {
		t.Errorf("final turn: got content %q at %d, want it untouched", c, seq)
	}
	for _, id := range []string{theirs.ID, released.ID, done.ID} {
		if n := count(t, db, "select count(*) from tool_calls where turn_id = $1", id); n != 0 {
			t.Errorf("turn %s: got %d tool calls written, want 0", id, n)
		}
		if n := count(t, db, "select count(*) from todos where turn_id = $1", id); n != 0 {
			t.Errorf("turn %s: got todos written", id)
		}
	}
	if n := storedEvents(t, db, ""); n != 2+2+1 {
		t.Errorf("got %d events, want 5 (two held turns and the final one)", n)
	}
}

// TestCommitWritesOnlyItsTurnsMessage commits writes whose MessageID is the
// assistant message of another turn the owner holds: a write is refused or
// committed for its own turn, and never changes another turn's message.
func TestCommitWritesOnlyItsTurnsMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	theirs := mustTurnAs(t, db, newOwner("other"), f.user.ID, mustConversation(t, db, f.user.ID).ID, "q")
	mine := mustTurn(t, db, f.user.ID, mustConversation(t, db, f.user.ID).ID, "q")
	for _, tu := range []toolmark.Turn{theirs, mine} {
		// Held by testOwner, nothing logged yet.
		victim := mustTurn(t, db, f.user.ID, mustConversation(t, db, f.user.ID).ID, "victim")
		w := write(t, tu, 0, toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "not yours"}})
		w.MessageID = victim.AssistantMessageID
		content := "not yours"
		w.Content = &content
		_ = db.Commit(ctx, testOwner, []store.TurnWrite{w})
		if c, seq, _ := db.Snapshot(ctx, victim.ID); c != "" || seq != 0 {
			t.Errorf("a write of turn %s (lease owner %s) set another turn's message to %q at seq %d, want it untouched",
				tu.ID, tu.LeaseOwner, c, seq)
		}
	}
}

// lastSeq0 is lastSeq, 0 for an unknown turn.
func lastSeq0(tb testing.TB, db *store.DB, turnID string) int64 {
	tb.Helper()
	tu, err := db.TurnByID(context.Background(), turnID)
	if err != nil {
		return 0
	}
	return tu.LastSeq
}

// TestCommitDuplicateSeq commits an event at a seq the turn already has:
// the whole Commit fails, nothing of it is written, and the error is
// transient (a sweep that won a race is seen on retry).
func TestCommitDuplicateSeq(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	other := mustTurn(t, db, f.user.ID, mustConversation(t, db, f.user.ID).ID, "q")
	text := func(s string) toolmark.Draft {
		return toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: s}}
	}
	mustCommit(t, db, f.turn, text("one"))

	valid := write(t, other, 0, text("other"))
	content := "other"
	valid.Content = &content
	valid.Started = true
	dup := write(t, f.turn, 0, text("one again"))
	twice := write(t, f.turn, 1, text("two"), text("two again"))
	twice.Events[1].Seq = 2
	for _, tt := range []struct {
		name string
		w    store.TurnWrite
	}{{"a seq already logged", dup}, {"a seq twice in one write", twice}} {
		t.Run(tt.name, func(t *testing.T) {
			err := db.Commit(ctx, testOwner, []store.TurnWrite{valid, tt.w})
			var refused *store.RefusedError
			if err == nil || errors.As(err, &refused) {
				t.Fatalf("Commit = %v, want an error that is not a refusal", err)
			}
			wantCode(t, "Commit", err, toolmark.ECONFLICT)
			if !store.Transient(err) {
				t.Errorf("Transient(%v) = false, want true", err)
			}
			if es, _ := db.EventsAfter(ctx, other.ID, 0, 0); len(es) != 0 {
				t.Errorf("the other turn got %d events written, want 0", len(es))
			}
			if c, seq, _ := db.Snapshot(ctx, other.ID); c != "" || seq != 0 {
				t.Errorf("the other turn got content %q at %d, want it untouched", c, seq)
			}
			if tu, _ := db.TurnByID(ctx, other.ID); tu.Status != toolmark.TurnQueued {
				t.Errorf("the other turn is %s, want queued", tu.Status)
			}
			if es, _ := db.EventsAfter(ctx, f.turn.ID, 0, 0); len(es) != 1 {
				t.Errorf("got %d events, want 1", len(es))
			}
		})
	}
	// The retry without the duplicate commits.
	mustCommitAs(t, db, testOwner, valid)

	// Two writers of the same seq at once: exactly one wins.
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			errs <- db.Commit(ctx, testOwner, []store.TurnWrite{write(t, f.turn, 1, text(fmt.Sprint("racer ", i)))})
		}()
	}
	wins := 0
	for range 8 {
		err := <-errs
		switch {
		case err == nil:
			wins++
		case !store.Transient(err):
			t.Errorf("losing racer: got %v, want a transient error", err)
		}
	}
	if wins != 1 {
		t.Errorf("got %d racers committing seq 2, want 1", wins)
	}
	if es, _ := db.EventsAfter(ctx, f.turn.ID, 0, 0); len(es) != 2 {
		t.Errorf("got %d events, want 2", len(es))
	}
}
