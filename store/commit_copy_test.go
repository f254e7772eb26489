package store_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
)

// TestCommitCopiesManyRows: a commit of many event rows writes them with
// COPY after its batch (no INSERT into events in the batch), and keeps
// every promise of the INSERT: the guard refuses the turns another owner
// leases and writes nothing of theirs, the rows read back as written (text
// alone, several in a row, times to the microsecond), a failure at any
// statement or a duplicate seq writes nothing, and the same commit again
// writes it whole.
func TestCommitCopiesManyRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	db := f.db
	const turns, others = 40, 5
	var tus, refused []toolmark.Turn
	for i := range turns + others {
		owner := testOwner
		if i >= turns {
			owner = newOwner("other")
		}
		tu := mustTurnAs(t, db, owner, f.user.ID, mustConversation(t, db, f.user.ID).ID, "q")
		if i < turns {
			tus = append(tus, tu)
		} else {
			refused = append(refused, tu)
		}
	}
	all := append(append([]toolmark.Turn{}, tus...), refused...)
	// writes are the turns' writes after the seqs in after, every other one
	// of two events (a row of several), the others of a text alone.
	writes := func(after []int64) []store.TurnWrite {
		var ws []store.TurnWrite
		for i, tu := range all {
			ds := []toolmark.Draft{{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: fmt.Sprintf("<b>%d</b>\t\"\\\n", i)}}}
			if i%2 == 0 {
				ds = append(ds, toolmark.Draft{Type: toolmark.EventRoundStarted, Data: toolmark.RoundStartedData{Round: i}})
			}
			w := write(t, tu, after[i], ds...)
			for k := range w.Events {
				w.Events[k].Time = w.Events[k].Time.Add(time.Duration(i*1000+k*7) * time.Microsecond)
			}
			ws = append(ws, w)
		}
		return ws
	}
	var stmts []string
	db.RecordCommits(func(sql string) { stmts = append(stmts, sql) })
	first := make([]int64, len(all))
	for i := range first {
		first[i] = 1 // turn_queued
	}
	ws := writes(first)
	err := db.Commit(ctx, testOwner, ws)
	db.RecordCommits(nil)
	ids := make([]string, len(refused))
	for i, tu := range refused {
		ids[i] = tu.ID
	}
	wantLeaseLost(t, "Commit", err, ids...)
	for _, s := range stmts {
		if strings.Contains(s, "insert into events") {
			t.Errorf("a commit of %d rows inserted its events:\n%s", turns+others, s)
		}
	}
	for i, w := range ws {
		es, err := db.EventsAfter(ctx, w.TurnID, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if i >= turns {
			if len(es) != 0 {
				t.Errorf("turn %d, leased by another owner, got %d events written", i, len(es))
			}
			continue
		}
		if len(es) != len(w.Events) {
			t.Fatalf("turn %d: read %d events, wrote %d", i, len(es), len(w.Events))
		}
		for k, e := range es {
			want := w.Events[k]
			if e.Seq != want.Seq || e.Type != want.Type || string(e.Data) != string(want.Data) || !e.Time.Equal(want.Time) {
				t.Errorf("turn %d event %d: read %+v, wrote %+v", i, k, e, want)
			}
		}
	}

	// The next commit of the same turns fails at each statement in turn,
	// then at its events (a seq already written), and writes nothing.
	last := make([]int64, len(all))
	for i, w := range ws {
		last[i] = w.Events[len(w.Events)-1].Seq
	}
	next := writes(last)[:turns]
	for k := 0; k <= len(stmts); k++ {
		db.FailCommitsAt(k)
		err := db.Commit(ctx, testOwner, next)
		db.FailCommitsAt(-1)
		if err == nil {
			t.Fatalf("statement %d fails: no error", k)
		}
	}
	dup := writes(last)[:turns]
	dup[turns-1] = ws[turns-1]
	if err := db.Commit(ctx, testOwner, dup); err == nil || !store.Transient(err) {
		t.Fatalf("a commit with a seq already written: %v, want a transient error", err)
	}
	for i, tu := range tus {
		if n := lastSeq0(t, db, tu.ID); n != ws[i].Events[len(ws[i].Events)-1].Seq {
			t.Fatalf("turn %d: failed commits wrote up to seq %d", i, n)
		}
	}
	mustCommitAs(t, db, testOwner, next...)
	for i, tu := range tus {
		if n := lastSeq0(t, db, tu.ID); n != next[i].Events[len(next[i].Events)-1].Seq {
			t.Errorf("turn %d: the commit again wrote up to seq %d", i, n)
		}
	}
}

// TestEventsGuardReadsEachTurnOnce: the guard a copying commit runs alone
// reads each of its turns' rows once, by the primary key, however many of
// the commit's rows are the turn's (its ids come once per row).
func TestEventsGuardReadsEachTurnOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	const turns = 40
	ids := make([]string, turns)
	for i := range ids {
		ids[i] = mustTurnAs(t, f.db, testOwner, f.user.ID, mustConversation(t, f.db, f.user.ID).ID, "q").ID
	}
	// A turn comes once per row of the commit: here twice.
	rows, err := f.db.Pool().Query(ctx, "explain (analyze, costs off, timing off) "+store.EventsGuardSQL, testOwner, append(ids, ids...))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	// Rows the primary key gave, in all its scans: each turn once.
	scans := regexp.MustCompile(`(?:Index Scan using|Bitmap Index Scan on) turns_pkey .*actual rows=(\d+) loops=(\d+)`)
	reads := 0
	for _, line := range plan {
		if m := scans.FindStringSubmatch(line); m != nil {
			rows, _ := strconv.Atoi(m[1]) // \d+
			loops, _ := strconv.Atoi(m[2])
			reads += rows * loops
		}
	}
	if reads != turns {
		t.Errorf("the guard of %d turns read turns by key %d times; want %d:\n%s", turns, reads, turns, strings.Join(plan, "\n"))
	}
}
