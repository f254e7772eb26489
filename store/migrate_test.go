package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/store"
)

// TestMigrateTwice migrates an empty database from two connections at
// once, then again: the schema ends at the latest version, once.
func TestMigrateTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := unmigrated(t)
	wantCode(t, "Ready before migrating", db.Ready(ctx), toolmark.EUNAVAILABLE)

	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := db.Migrate(ctx); err != nil {
				t.Errorf("concurrent Migrate: %v", err)
			}
		}()
	}
	wg.Wait()
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("Migrate on a current schema: %v", err)
	}
	if err := db.Ready(ctx); err != nil {
		t.Fatalf("Ready after migrating: %v", err)
	}
	if v := count(t, db, "select version from schema_version"); v != store.SchemaVersion() || v < 1 {
		t.Errorf("got schema version %d, want %d", v, store.SchemaVersion())
	}
	if _, err := db.EnsureUser(ctx, "frank"); err != nil {
		t.Errorf("the migrated schema does not work: %v", err)
	}
}

// TestMigrateEventsByTurnNumber writes a turn's events under schema 7
// (keyed by the turn's text id), migrates, and reads them back under their
// turn's number; deleting the turn still deletes its events.
func TestMigrateEventsByTurnNumber(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := unmigrated(t)
	if err := db.MigrateTo(ctx, 7); err != nil {
		t.Fatal(err)
	}
	var turnID string
	err := db.Pool().QueryRow(ctx, oldConversation+`,
		t as (insert into turns (conversation_id, user_message_id, assistant_message_id, status, last_seq)
			select c.id, 'mu', 'ma', 'completed', 3 from c where (select count(*) from m) = 2 returning id),
		other as (insert into turns (conversation_id, user_message_id, assistant_message_id, status)
			select c.id, 'mu', 'ma', 'failed' from c returning id),
		e as (insert into events (turn_id, seq, type, data, time)
			select t.id, s, 'text_delta', json_build_object('text', 'part ' || s), now() from t, generate_series(1, 3) s
			union all select other.id, 1, 'turn_failed', '{}', now() from other)
		select id from t`).Scan(&turnID)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	evs, err := db.EventsAfter(ctx, turnID, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Seq != 2 || string(evs[1].Data) != `{"text" : "part 3"}` {
		t.Fatalf("after migrating: got %+v, want seqs 2 and 3 with their data", evs)
	}
	if n := count(t, db, "select count(*) from events"); n != 4 {
		t.Fatalf("got %d events after migrating, want 4", n)
	}
	if _, err := db.Pool().Exec(ctx, "delete from turns where id = $1", turnID); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, "select count(*) from events"); n != 1 {
		t.Errorf("got %d events after deleting a turn of 3, want the other turn's 1", n)
	}
}

// TestMigrateCompactEvents writes an event of every type under schema 8
// (types as text), migrates, and reads them back with their types, data
// and times: the migration's numbers are the ones the store reads.
func TestMigrateCompactEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := unmigrated(t)
	if err := db.MigrateTo(ctx, 8); err != nil {
		t.Fatal(err)
	}
	types := []toolmark.EventType{
		toolmark.EventTurnQueued, toolmark.EventTurnStarted, toolmark.EventRoundStarted, toolmark.EventTextDelta,
		toolmark.EventToolCallStarted, toolmark.EventToolCallDelta, toolmark.EventToolCallRunning,
		toolmark.EventToolCallSuccess, toolmark.EventToolCallError, toolmark.EventTodoUpdate,
		toolmark.EventSubagentStatus, toolmark.EventSnapshot, toolmark.EventModelRetry, toolmark.EventUsage,
		toolmark.EventTurnCompleted, toolmark.EventTurnFailed, toolmark.EventTurnCancelled,
	}
	names := make([]string, len(types))
	for i, typ := range types {
		names[i] = string(typ)
	}
	at := time.Date(2026, 11, 26, 12, 0, 0, 123456000, time.UTC)
	var turnID string
	err := db.Pool().QueryRow(ctx, oldConversation+`,
		t as (insert into turns (conversation_id, user_message_id, assistant_message_id, status, last_seq)
			select c.id, 'mu', 'ma', 'completed', cardinality($1::text[]) from c where (select count(*) from m) = 2 returning id, num),
		e as (insert into events (turn, seq, type, data, time)
			select t.num, s.i, s.name, json_build_object('n', s.i), $2 from t, unnest($1::text[]) with ordinality as s(name, i))
		select id from t`, names, at).Scan(&turnID)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	evs, err := db.EventsAfter(ctx, turnID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != len(types) {
		t.Fatalf("read %d events, want %d", len(evs), len(types))
	}
	for i, e := range evs {
		if e.Seq != int64(i+1) || e.Type != types[i] || string(e.Data) != fmt.Sprintf(`{"n" : %d}`, i+1) || !e.Time.Equal(at) {
			t.Errorf("event %d: got seq %d type %s data %s time %v, want seq %d type %s", i, e.Seq, e.Type, e.Data, e.Time, i+1, types[i])
		}
	}
}

// TestMigrateCompactEventsKeepsLateEvents commits an event of a replica of
// the version before while migration 9 runs: the migration waits for it and
// copies it; none is dropped with the old table.
func TestMigrateCompactEventsKeepsLateEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := unmigrated(t)
	if err := db.MigrateTo(ctx, 8); err != nil {
		t.Fatal(err)
	}
	var turnID string
	var num int64
	err := db.Pool().QueryRow(ctx, oldConversation+`,
		t as (insert into turns (conversation_id, user_message_id, assistant_message_id, status)
			select c.id, 'mu', 'ma', 'running' from c where (select count(*) from m) = 2 returning id, num),
		e as (insert into events (turn, seq, type, data, time) select t.num, 1, 'turn_queued', '{}', now() from t)
		select id, num from t`).Scan(&turnID, &num)
	if err != nil {
		t.Fatal(err)
	}
	old, err := db.Pool().Begin(ctx) // the old replica's group commit, open
	if err != nil {
		t.Fatal(err)
	}
	defer old.Rollback(ctx)
	if _, err := old.Exec(ctx, `insert into events (turn, seq, type, data, time) values ($1, 2, 'text_delta', '{"text":"late"}', now())`, num); err != nil {
		t.Fatal(err)
	}
	migrated := make(chan error, 1)
	go func() { migrated <- db.Migrate(ctx) }()
	// Commit once the migration waits for the open commit's lock.
	deadline := time.Now().Add(30 * time.Second)
	for count(t, db, `select count(*) from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the migration never waited for the open commit")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := old.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-migrated; err != nil {
		t.Fatal(err)
	}
	evs, err := db.EventsAfter(ctx, turnID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[1].Type != toolmark.EventTextDelta || string(evs[1].Data) != `{"text":"late"}` {
		t.Fatalf("after migrating: got %+v, want the turn's 2 events, the late one last", evs)
	}
}

// oldConversation begins a statement that writes, under an earlier
// schema, a user, a conversation (c) and its two messages "mu" and "ma" (m).
const oldConversation = `
		with u as (insert into users (name) values ('old') returning id),
		c as (insert into conversations (owner_id) select id from u returning id),
		m as (insert into messages (id, conversation_id, role, status)
			select x, c.id, r, 'complete' from c, unnest(array['mu', 'ma'], array['user', 'assistant']) as v(x, r) returning id)`

// unmigrated returns a store on a database with an empty schema.
func unmigrated(t *testing.T) *store.DB {
	db := pgtest.New(t)
	if _, err := db.Pool().Exec(context.Background(), "drop schema public cascade; create schema public"); err != nil {
		t.Fatal(err)
	}
	return db
}
