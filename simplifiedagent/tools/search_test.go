package tools_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/simplifiedagent/tools"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestSearchDocumentsPostgres ingests the demo corpus into a real,
// freshly migrated database and searches it through the tool.
func TestSearchDocumentsPostgres(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	var seen []string
	n, err := tools.Ingest(ctx, db, filepath.Join("..", "..", "testdata", "corpus"), func(source string, n int) {
		seen = append(seen, source)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 || len(seen) != n {
		t.Fatalf("ingested %d documents (%d reported), want at least 10", n, len(seen))
	}
	// Ingesting again replaces, it does not duplicate.
	if n2, err := tools.Ingest(ctx, db, filepath.Join("..", "..", "testdata", "corpus"), nil); err != nil || n2 != n {
		t.Fatalf("second ingest: %d, %v", n2, err)
	}

	search := tools.NewSearchDocuments(db)
	got, err := search.Call(ctx, `{"query":"resume Last-Event-ID"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "Found ") || !strings.Contains(got, "[1] Resuming a stream after a disconnect (resume.md)") {
		t.Errorf("result:\n%s", got)
	}
	attrs := search.ResultAttrs(got)
	if len(attrs) != 1 || attrs[0].Key != "count" || attrs[0].Value == "0" {
		t.Errorf("ResultAttrs = %v, want a non-zero count", attrs)
	}
	none, err := search.Call(ctx, `{"query":"xylophone"}`)
	if err != nil {
		t.Fatal(err)
	}
	if none != "Found 0 documents for \"xylophone\".\n" {
		t.Errorf("no hits: got %q", none)
	}
}

type fakeStore struct {
	docs map[string][2]string
	err  error
}

func (f *fakeStore) UpsertDocument(_ context.Context, source, title, body string) (string, error) {
	if f.err != nil {
		return "", f.err
	}
	f.docs[source] = [2]string{title, body}
	return "id-" + source, nil
}

func (f *fakeStore) SearchDocuments(_ context.Context, query string, limit int) ([]toolmark.DocumentHit, error) {
	return nil, f.err
}

func TestIngest(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.md":           "intro\n\n## Second-level title\n\ntext",
		"notes.txt":      "plain \x1b[1;31mnotes\x1b[0m\x1b]8;;http://x\x07link\x1b]8;;\x07 \x1b[2K",
		"sub/b.markdown": "# B",
		".hidden/c.md":   "# hidden",
		"image.png":      "binary",
		"sub/.secret.md": "# secret",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st := &fakeStore{docs: map[string][2]string{}}
	n, err := tools.Ingest(context.Background(), st, dir, nil)
	if err != nil || n != 3 {
		t.Fatalf("Ingest = %d, %v; want 3", n, err)
	}
	want := map[string]string{"a.md": "Second-level title", "notes.txt": "notes", "sub/b.markdown": "B"}
	for src, title := range want {
		if st.docs[src][0] != title {
			t.Errorf("%s: title %q, want %q", src, st.docs[src][0], title)
		}
	}
	if got := st.docs["notes.txt"][1]; got != "plain noteslink " {
		t.Errorf("notes.txt body %q: want the terminal escape sequences gone", got)
	}
	st.err = errors.New("db down")
	if _, err := tools.Ingest(context.Background(), st, dir, nil); !errors.Is(err, st.err) {
		t.Errorf("got %v, want the store error", err)
	}
}

func TestSearchDocumentsErrors(t *testing.T) {
	s := tools.NewSearchDocuments(&fakeStore{err: errors.New("boom")})
	if _, err := s.Call(context.Background(), `{"query":""}`); err == nil {
		t.Error("empty query: want an error")
	}
	if _, err := s.Call(context.Background(), `plain query`); err == nil || !strings.Contains(err.Error(), "could not be searched") || !strings.Contains(fmt.Sprint(errors.Unwrap(err)), "boom") {
		t.Errorf("got %v, want a short message wrapping the searcher's error", err)
	}
	if got := s.TagAttrs(map[string]any{"query": "q"}); len(got) != 1 || got[0].Value != "q" {
		t.Errorf("TagAttrs = %v", got)
	}
}
