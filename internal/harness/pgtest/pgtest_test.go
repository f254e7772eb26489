package pgtest_test

import (
	"context"
	"testing"

	"github.com/toolmark/toolmark/internal/harness/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestFreshDatabases(t *testing.T) {
	ctx := context.Background()
	a, b := pgtest.New(t), pgtest.New(t)
	if err := a.Ready(ctx); err != nil {
		t.Fatalf("got Ready() = %v, want nil", err)
	}
	if _, err := a.EnsureUser(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := b.Pool().QueryRow(ctx, "select count(*) from users").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("got %d users in the second database, want 0: databases are not isolated", n)
	}
}

func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		pgtest.New(b)
	}
}
