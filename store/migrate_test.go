package store_test

import (
	"context"
	"sync"
	"testing"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/pgtest"
	"github.com/toolmark/toolmark/store"
)

// TestMigrateTwice migrates an empty database from two connections at
// once, then again: the schema ends at the latest version, once.
func TestMigrateTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	if _, err := db.Pool().Exec(ctx, "drop schema public cascade; create schema public"); err != nil {
		t.Fatal(err)
	}
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
