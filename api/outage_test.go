package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/embeddedpg"
	"github.com/toolmark/toolmark/internal/harness/testserver"
	"github.com/toolmark/toolmark/store"
)

// ownPostgres starts a PostgreSQL server of the test's own, which the test
// may stop and start again on the same port and data directory.
func ownPostgres(t *testing.T, port int, dir string) *embeddedpg.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pg, err := embeddedpg.Start(ctx, embeddedpg.Config{
		DataDir: filepath.Join(dir, "pgdata"), Port: port, NoSync: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if errors.Is(err, embeddedpg.ErrNoBinaries) && os.Getenv("CI") != "true" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatalf("starting postgres: %v", err)
	}
	t.Cleanup(func() { _ = pg.Stop(context.Background()) })
	return pg
}

// TestDatabaseOutage stops the server's PostgreSQL and checks that every
// route that needs it answers 503 with Retry-After and the JSON error code
// "unavailable" (never 500, never an internal detail), that the token of a
// signed-in user is not called invalid meanwhile, and that everything works
// again once PostgreSQL is back.
func TestDatabaseOutage(t *testing.T) {
	dir := t.TempDir()
	// postgres runs as another user when the tests run as root.
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	pg := ownPostgres(t, 0, dir)
	ctx := context.Background()
	db, err := store.Open(ctx, pg.URL(), store.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	srv := testserver.Start(t, testserver.Options{DB: db, Auth: "token"})
	u, err := db.EnsureUser(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	token, err := db.CreateToken(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	alice := newClient(t, srv.URL, token)
	var chat struct {
		ConversationID string        `json:"conversationId"`
		Turn           toolmark.Turn `json:"turn"`
	}
	alice.mustJSON("POST", "/api/chat", `{"content":"How does resume work?"}`, 200, &chat)
	conv, turn := chat.ConversationID, chat.Turn.ID

	routes := []struct{ method, path, body string }{
		{"GET", "/readyz", ""},
		{"GET", "/api/info", ""},
		{"GET", "/api/conversations", ""},
		{"POST", "/api/conversations", `{"title":"x"}`},
		{"GET", "/api/conversations/" + conv, ""},
		{"DELETE", "/api/conversations/" + conv, ""},
		{"POST", "/api/conversations/" + conv + "/turns", `{"content":"hi"}`},
		{"GET", "/api/turns/" + turn, ""},
		{"GET", "/api/turns/" + turn + "/events", ""},
		{"POST", "/api/turns/" + turn + "/cancel", ""},
		{"POST", "/api/chat", `{"content":"hi"}`},
		{"POST", "/api/session", `{"token":"` + token + `"}`},
	}

	port := pg.Port()
	if err := pg.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range routes {
		t.Run("down "+r.method+" "+r.path, func(t *testing.T) {
			st, h, b := alice.do(r.method, r.path, r.body)
			if st != 503 {
				t.Fatalf("got %d, want 503: %s", st, b)
			}
			if s, err := strconv.Atoi(h.Get("Retry-After")); err != nil || s <= 0 {
				t.Errorf("Retry-After %q, want a number of seconds", h.Get("Retry-After"))
			}
			var e struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			if err := json.Unmarshal(b, &e); err != nil {
				t.Fatalf("body %q: %v", b, err)
			}
			if e.Error.Code != toolmark.EUNAVAILABLE || e.Error.Message == "" {
				t.Errorf("got %+v, want code unavailable with a message", e.Error)
			}
			for _, leak := range []string{"127.0.0.1", strconv.Itoa(port), "dial", "SQLSTATE", "pgx", "postgres"} {
				if strings.Contains(e.Error.Message, leak) {
					t.Errorf("message %q shows %q", e.Error.Message, leak)
				}
			}
		})
	}
	if st, _, b := alice.do("GET", "/healthz", ""); st != 200 {
		t.Errorf("healthz while the database is down: got %d %s, want 200 (the process lives)", st, b)
	}

	ownPostgres(t, port, dir)
	// The pool reconnects on its own; wait until a request gets through.
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, _, b := alice.do("GET", "/api/conversations", "")
		if st == 200 {
			break
		}
		if st != 503 || time.Now().After(deadline) {
			t.Fatalf("after the restart: got %d %s", st, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	alice.mustJSON("GET", "/readyz", "", 200, nil)
	alice.mustJSON("GET", "/api/conversations/"+conv, "", 200, nil)
	alice.mustJSON("POST", "/api/session", `{"token":"`+token+`"}`, 204, nil)
	var again struct {
		Turn toolmark.Turn `json:"turn"`
	}
	alice.mustJSON("POST", "/api/chat", `{"conversationId":"`+conv+`","content":"And cancel?"}`, 200, &again)
	if again.Turn.Status != toolmark.TurnCompleted {
		t.Errorf("a turn after the restart ended %s, want completed", again.Turn.Status)
	}
}
