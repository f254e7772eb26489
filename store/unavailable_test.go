package store_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/store"
)

// TestUnavailable classifies errors a real server and a real network give:
// connection-level failures are outages, errors about the request are not.
func TestUnavailable(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	db := pgtest.New(t)

	// Nothing listens on a port that was just freed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	_, refused := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/x?sslmode=disable&connect_timeout=5", closedPort))

	// A session the server ends (SQLSTATE 57P01, as at a fast shutdown).
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if err := conn.QueryRow(ctx, "select pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, "select pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	_, terminated := conn.Exec(ctx, "select 1")
	_, afterClose := conn.Exec(ctx, "select 1")
	conn.Close(ctx)

	_, syntax := db.Pool().Exec(ctx, "selec 1")
	_, divZero := db.Pool().Exec(ctx, "select 1/0")
	noRows := db.Pool().QueryRow(ctx, "select 1 where false").Scan(new(int))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, canceled := db.Pool().Exec(cctx, "select 1")
	tctx, tcancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer tcancel()
	_, timedOut := db.Pool().Exec(tctx, "select pg_sleep(5)")

	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", refused, true},
		{"connection refused, wrapped", fmt.Errorf("listing: %w", refused), true},
		{"session terminated by the server", terminated, true},
		{"query on the closed connection", afterClose, true},
		{"query that timed out", timedOut, true},
		{"syntax error", syntax, false},
		{"division by zero", divZero, false},
		{"no rows", noRows, false},
		{"request cancelled", canceled, false},
		{"toolmark error", toolmark.Errorf(toolmark.ENOTFOUND, "x"), false},
		{"other error", errors.New("boom"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want && tt.err == nil {
				t.Fatal("the operation did not fail")
			}
			if got := store.Unavailable(tt.err); got != tt.want {
				t.Errorf("Unavailable(%v) got %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
