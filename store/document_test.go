package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
)

func TestSearchDocuments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFixture(t).db
	docs := []struct{ source, title, body string }{
		{"body-once.md", "Cooking", "A long text about pasta. " + strings.Repeat("Water boils and salt goes in. ", 20) + "Goroutines are mentioned once."},
		{"title.md", "Goroutines and channels", "How to start concurrent work in Go with the go statement."},
		{"body-often.md", "Scheduling", "Goroutines are cheap. Goroutines are multiplexed onto threads. Many goroutines <b>run</b>."},
		{"unrelated.md", "Databases", "PostgreSQL stores rows in heap pages."},
	}
	for _, d := range docs {
		if _, err := db.UpsertDocument(ctx, d.source, d.title, d.body); err != nil {
			t.Fatal(err)
		}
	}
	// Upsert by source replaces, not duplicates.
	id1, _ := db.UpsertDocument(ctx, "unrelated.md", "Databases", "PostgreSQL stores rows in heap pages; indexes point at them.")
	id2, _ := db.UpsertDocument(ctx, "unrelated.md", "Databases", "PostgreSQL stores rows in heap pages; indexes point at them.")
	if id1 != id2 || count(t, db, "select count(*) from documents") != 4 {
		t.Fatalf("UpsertDocument by the same source created a second document")
	}

	hits, err := db.SearchDocuments(ctx, "goroutine", 10)
	if err != nil {
		t.Fatal(err)
	}
	pos := map[string]int{}
	for i, h := range hits {
		pos[h.Source] = i + 1
	}
	if len(hits) != 3 || pos["title.md"] == 0 || pos["body-often.md"] == 0 || pos["body-once.md"] == 0 {
		t.Fatalf("got hits %v, want the three documents that mention goroutines", hits)
	}
	// A title match (weight A) outranks a single body match (weight B), and
	// several body matches outrank one.
	if pos["title.md"] > pos["body-once.md"] || pos["body-often.md"] > pos["body-once.md"] {
		t.Errorf("got ranking %v, want title.md and body-often.md above body-once.md", hits)
	}
	for _, h := range hits {
		if h.Source != "title.md" && !strings.Contains(h.Snippet, "«") {
			t.Errorf("snippet %q of %s: want the match marked with « »", h.Snippet, h.Source)
		}
		if strings.Contains(h.Snippet, "<b>") && h.Source != "body-often.md" {
			t.Errorf("snippet %q of %s: HTML added", h.Snippet, h.Source)
		}
		if h.Rank <= 0 || h.ID == "" || h.Title == "" {
			t.Errorf("incomplete hit %+v", h)
		}
	}
	if hits[0].Rank < hits[1].Rank || hits[1].Rank < hits[2].Rank {
		t.Errorf("hits not ordered by rank: %v", hits)
	}

	tests := []struct {
		query string
		want  []string
	}{
		{`"heap pages"`, []string{"unrelated.md"}},
		{"goroutines -cheap", []string{"title.md", "body-once.md"}},
		{"pasta or postgresql", []string{"body-once.md", "unrelated.md"}},
		{"", nil},
		{"the", nil}, // only a stop word
		{"<script>", nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			hits, err := db.SearchDocuments(ctx, tt.query, 10)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, h := range hits {
				got[h.Source] = true
			}
			if len(got) != len(tt.want) {
				t.Errorf("got %v, want %v", hits, tt.want)
			}
			for _, w := range tt.want {
				if !got[w] {
					t.Errorf("missing %s in %v", w, hits)
				}
			}
		})
	}
	if hits, _ := db.SearchDocuments(ctx, "goroutines", 1); len(hits) != 1 {
		t.Errorf("limit 1: got %d hits", len(hits))
	}
	_, err = db.SearchDocuments(ctx, "bad\x00", 1)
	wantCode(t, "SearchDocuments(NUL)", err, toolmark.EINVALID)
	_, err = db.UpsertDocument(ctx, "", "t", "b")
	wantCode(t, "UpsertDocument(no source)", err, toolmark.EINVALID)
}

// searchTracer records how many knowledge-base searches run at once.
type searchTracer struct {
	mu           sync.Mutex
	now, maxSeen int
}

func (s *searchTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "websearch_to_tsquery") {
		s.mu.Lock()
		s.now++
		s.maxSeen = max(s.maxSeen, s.now)
		s.mu.Unlock()
		return context.WithValue(ctx, searchTracer{}, true)
	}
	return ctx
}

func (s *searchTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	if ctx.Value(searchTracer{}) != nil {
		s.mu.Lock()
		s.now--
		s.mu.Unlock()
	}
}

// TestSearchesTakeTurns runs many searches at once on a pool of 8
// connections: at most a quarter of the pool searches at a time, and every
// search gets its hits.
func TestSearchesTakeTurns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tr := &searchTracer{}
	db := newFixture(t, store.WithMaxConns(8), store.WithTracer(tr)).db
	if _, err := db.UpsertDocument(ctx, "go.md", "Goroutines", strings.Repeat("Goroutines are cheap and many goroutines run. ", 200)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for range 40 {
		wg.Go(func() {
			hits, err := db.SearchDocuments(ctx, "goroutines", 5)
			if err == nil && len(hits) != 1 {
				err = fmt.Errorf("got %d hits, want 1", len(hits))
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if tr.maxSeen < 1 || tr.maxSeen > 2 {
		t.Errorf("%d searches ran at once on a pool of 8, want 1 or 2", tr.maxSeen)
	}

}

// TestHeadlineMarksWhatPostgreSQLMarks checks the snippets a search makes
// against PostgreSQL's own: every snippet, its marks taken out and given to
// ts_headline with HighlightAll, comes back with the same words marked —
// the Go stemmer and tokenizer agree with the english configuration. A body
// longer than the limit gets ts_headline's snippet, on one line.
func TestHeadlineMarksWhatPostgreSQLMarks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFixture(t).db
	filler := strings.Repeat("Nothing to see in this sentence at all. ", 12)
	docs := map[string]string{
		"runs.md":    "Running runners ran; the runner's runs were run twice. " + filler + "A run (see the runbook) ends.",
		"cancel.md":  filler + "Cancellation cancels cancelled turns, and cancelling is final. Studies studying studied.",
		"happy.md":   "Happily, happier happiness. Generalization generalizes generally. " + filler,
		"digits.md":  "Version v2 in 2024, x86_64 builds and e-mail, group-commit and naïve café 3.14 numbers.",
		"markup.md":  "<b>Crash</b> recovery: `toolmark` **restarts**, [the docs](https://e.com/crash) crash.log, x@crash.com, and/crash, e.g. crash. Restart: quoted.",
		"unicode.md": "die überprüfung der größe; проверка проверки; 東京 timing.",
	}
	for source, body := range docs {
		if _, err := db.UpsertDocument(ctx, source, strings.TrimSuffix(source, ".md"), body); err != nil {
			t.Fatal(err)
		}
	}
	queries := []string{"run", "runner", "cancel", "cancellation study", "happy generalization", "general",
		"2024 v2", "mail", "commit", `"group commit"`, "café", "crash docs", "restart quoted", "überprüfung größe",
		"проверка", "timing -happy", "sentence see"}
	marked := 0
	for _, q := range queries {
		hits, err := db.SearchDocuments(ctx, q, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 {
			t.Errorf("%q: no hits", q)
		}
		for _, h := range hits {
			marked += strings.Count(h.Snippet, "«")
			text := strings.TrimSpace(strings.NewReplacer("«", "", "»", "", "…", "").Replace(h.Snippet))
			var want string
			if err := db.Pool().QueryRow(ctx, `
				select ts_headline('english', $1, websearch_to_tsquery('english', $2), 'HighlightAll=true, StartSel=«, StopSel=»')`,
				text, q).Scan(&want); err != nil {
				t.Fatal(err)
			}
			got := strings.TrimSpace(strings.NewReplacer("… ", "", " …", "").Replace(h.Snippet))
			if got != want {
				t.Errorf("%q in %s:\n   snippet %q\nPostgreSQL %q", q, h.Source, got, want)
			}
		}
	}
	if marked < len(queries) {
		t.Errorf("%d words marked over %d queries", marked, len(queries))
	}

	long := strings.Repeat("Filler words\n\tfill the page. ", 3000) + "The needle is here. " + strings.Repeat("More filler. ", 100)
	if _, err := db.UpsertDocument(ctx, "long.md", "Long", long); err != nil {
		t.Fatal(err)
	}
	hits, err := db.SearchDocuments(ctx, "needle", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || !strings.Contains(hits[0].Snippet, "«needle»") || strings.ContainsAny(hits[0].Snippet, "\n\t") {
		t.Errorf("long document: got %+v, want one hit with «needle» marked on one line", hits)
	}
}
