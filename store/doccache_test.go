package store_test

import (
	"context"
	"strings"
	"testing"
)

// TestSearchReadsBodiesOnce: a search reads from the database only the
// bodies of documents it has not read at their current version; a
// replaced document is read again and its snippet comes from its new body.
func TestSearchReadsBodiesOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFixture(t).db
	for _, d := range []struct{ source, body string }{
		{"a.md", "Lanterns light the harbour at night."},
		{"b.md", "The harbour master counts the lanterns."},
	} {
		if _, err := db.UpsertDocument(ctx, d.source, "notes", d.body); err != nil {
			t.Fatal(err)
		}
	}
	snippets := func() map[string]string {
		t.Helper()
		hits, err := db.SearchDocuments(ctx, "lantern", 10)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, h := range hits {
			out[h.Source] = h.Snippet
		}
		if len(out) != 2 {
			t.Fatalf("got hits %v, want a.md and b.md", hits)
		}
		return out
	}
	first := snippets()
	if n := db.DocumentBodiesRead(); n != 2 {
		t.Fatalf("the first search read %d bodies; want 2", n)
	}
	if again := snippets(); again["a.md"] != first["a.md"] || again["b.md"] != first["b.md"] {
		t.Errorf("snippets changed between two searches: %v, then %v", first, again)
	}
	if n := db.DocumentBodiesRead(); n != 2 {
		t.Errorf("after a second search %d bodies were read; want still 2", n)
	}

	if _, err := db.UpsertDocument(ctx, "a.md", "notes", "Paper lanterns drift on the canal."); err != nil {
		t.Fatal(err)
	}
	after := snippets()
	if !strings.Contains(after["a.md"], "canal") {
		t.Errorf("snippet of the replaced a.md is %q; want it from its new body", after["a.md"])
	}
	if after["b.md"] != first["b.md"] {
		t.Errorf("snippet of b.md changed: %q, then %q", first["b.md"], after["b.md"])
	}
	if n := db.DocumentBodiesRead(); n != 3 {
		t.Errorf("after a.md was replaced, %d bodies were read in all; want 3 (a.md again)", n)
	}
}
