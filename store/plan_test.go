package store_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
)

// TestGenericPlansUseKeys: the statements a turn runs most — the group
// commit's and the history read — are prepared once per connection, and
// PostgreSQL keeps a generic plan made when the tables were small. Made on
// a new database, every such plan must still find turns and messages by
// their primary keys: a plan that reads a partial index of the active
// turns or live messages in full, or a table, costs more per row as the
// tables grow, and under load it made one group commit take seconds.
func TestGenericPlansUseKeys(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var stmts []string
	f.db.RecordCommits(func(sql string) { stmts = append(stmts, sql) })
	w := write(t, f.turn, 0, toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}})
	w.Started = true
	w.ToolCalls = []toolmark.ToolCallRecord{{ID: "c1", Name: "search_documents", Arguments: []byte(`{"query":"go"}`)}}
	w.Todos = &[]toolmark.Todo{{Text: "look", Status: toolmark.TodoInProgress}}
	content := "partial"
	w.Content = &content
	mustCommitAs(t, f.db, testOwner, w)
	mustCommitAs(t, f.db, testOwner, finishWrite(t, f.turn, 1, toolmark.TurnCompleted, "", "done"))
	f.db.RecordCommits(nil)
	stmts = append(stmts, store.HistoryQuery, store.RenewLeasesQuery)

	// The plans are made on a database migrated for this test, whose tables
	// are empty and were never analyzed, as a new replica's first commit on
	// a new database finds them.
	fresh := unmigrated(t)
	if err := fresh.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := fresh.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `set plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`\$(\d+)`)
	checked := map[string]bool{}
	for i, sql := range stmts {
		if checked[sql] || strings.Contains(sql, "pg_notify") {
			continue
		}
		checked[sql] = true
		n := 0
		for _, m := range param.FindAllStringSubmatch(sql, -1) {
			k, _ := strconv.Atoi(m[1]) // \d+: always a number
			n = max(n, k)
		}
		name := fmt.Sprintf("plan_%d", i)
		if _, err := conn.Exec(ctx, "prepare "+name+" as "+sql); err != nil {
			t.Fatalf("prepare %s: %v", sql, err)
		}
		args := strings.TrimSuffix(strings.Repeat("null, ", n), ", ")
		rows, err := conn.Query(ctx, "explain execute "+name+"("+args+")")
		if err != nil {
			t.Fatalf("explain %s: %v", sql, err)
		}
		plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatalf("explain %s: %v", sql, err)
		}
		for _, line := range plan {
			if badScan(line) {
				t.Errorf("a generic plan on a new database reads %q:\n%s\n\nstatement:%s", strings.TrimSpace(line), strings.Join(plan, "\n"), sql)
				break
			}
		}
	}
	if len(checked) < 6 {
		t.Errorf("checked %d statements; want the group commit's and the history read", len(checked))
	}
}

var indexScan = regexp.MustCompile(`(?:Index Scan|Index Only Scan|Bitmap Index Scan) (?:Backward )?(?:using |on )(\w+)`)

// badScan reports a plan line that reads a table, or an index of turns or
// messages other than its primary key.
func badScan(line string) bool {
	if strings.Contains(line, "Seq Scan") {
		return true
	}
	m := indexScan.FindStringSubmatch(line)
	if m == nil {
		return false
	}
	switch m[1] {
	case "turns_one_active", "turns_finished_at", "messages_conversation_live":
		return true
	}
	return false
}

// TestWarmUpRuns: the statements that warm a new connection stay valid as
// the schema changes (warmUp ignores their errors, so that a connection
// made before the schema exists still works).
func TestWarmUpRuns(t *testing.T) {
	f := newFixture(t)
	if _, err := f.db.Pool().Exec(context.Background(), store.WarmSQL); err != nil {
		t.Fatalf("warming a connection: %v", err)
	}
}

// TestTurnStartAndRenewalAreHOT: a turn's start writes its status and
// started_at, a lease renewal its lease_expires_at, and for those updates to
// stay on the row's page without a new entry in each of the table's
// indexes (a HOT update), no index of turns may cover or filter on those
// columns. The index of the active turns filters on finished_at instead,
// which a constraint keeps in step with the status.
func TestTurnStartAndRenewalAreHOT(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	rows, err := f.db.Pool().Query(ctx, `select pg_get_indexdef(indexrelid) from pg_index where indrelid = 'turns'::regclass`)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	written := regexp.MustCompile(`\b(status|started_at|lease_expires_at)\b`)
	for _, def := range defs {
		if written.MatchString(def) {
			t.Errorf("an index of turns covers or filters on a column a turn's start or lease renewal writes: %s", def)
		}
	}
	if len(defs) < 5 {
		t.Errorf("found %d indexes of turns: %q", len(defs), defs)
	}

	for _, set := range []string{"status = 'completed'", "finished_at = now()"} {
		_, err := f.db.Pool().Exec(ctx, `update turns set `+set+` where id = $1`, f.turn.ID)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.ConstraintName != "turns_finished_when_final" {
			t.Errorf("set %s on a queued turn: got %v, want a violation of turns_finished_when_final", set, err)
		}
	}
	if _, err := f.db.Pool().Exec(ctx, `update turns set status = 'completed', finished_at = now() where id = $1`, f.turn.ID); err != nil {
		t.Errorf("ending a turn: %v", err)
	}
}
