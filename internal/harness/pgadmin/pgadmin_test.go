package pgadmin_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark/internal/harness/pgadmin"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
)

func TestRandomName(t *testing.T) {
	a, b := pgadmin.RandomName("x_"), pgadmin.RandomName("x_")
	if a == b || !strings.HasPrefix(a, "x_") || len(a) != 2+16 {
		t.Errorf("got %q and %q: want two different x_ and 16 hex digits", a, b)
	}
}

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestCreateDrop creates a database on the tests' server, naming the server
// in both forms of connection string, connects to it and drops it.
func TestCreateDrop(t *testing.T) {
	admin := pgtest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := pgx.ParseConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	kv := "host=" + cfg.Host + " port=" + strconv.Itoa(int(cfg.Port)) + " user=" + cfg.User + " dbname=" + cfg.Database + " sslmode=disable"
	for _, server := range []string{admin, kv} {
		name := pgadmin.RandomName("pgadmin_test_")
		u, err := pgadmin.Create(ctx, server, name, "")
		if err != nil {
			t.Fatal(err)
		}
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatalf("connecting to %s: %v", u, err)
		}
		var got string
		err = conn.QueryRow(ctx, "select current_database()").Scan(&got)
		conn.Close(ctx)
		if err != nil || got != name {
			t.Errorf("%s: current_database() = %q, %v; want %q", u, got, err, name)
		}
		if err := pgadmin.Drop(ctx, server, name); err != nil {
			t.Fatal(err)
		}
		if _, err := pgx.Connect(ctx, u); err == nil {
			t.Errorf("%s: still there after Drop", u)
		}
	}
}
