package embeddedpg_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark/internal/embeddedpg"
)

func mustStart(tb testing.TB, cfg embeddedpg.Config) *embeddedpg.Server {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := embeddedpg.Start(ctx, cfg)
	if err != nil {
		if _, berr := embeddedpg.FindBinDir(); berr != nil && os.Getenv("CI") != "true" {
			tb.Skip(berr)
		}
		tb.Fatal(err)
	}
	return s
}

// dataDir returns a fresh data directory path whose parents the unprivileged
// user postgres runs as (when the tests run as root) can search.
func dataDir(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o711); err != nil {
			tb.Fatal(err)
		}
	}
	return filepath.Join(dir, "pgdata")
}

func query(tb testing.TB, url, sql string) string {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	var s string
	if err := conn.QueryRow(ctx, sql).Scan(&s); err != nil {
		tb.Fatal(err)
	}
	return s
}

func TestStartStopReuse(t *testing.T) {
	dir := dataDir(t)
	cfg := embeddedpg.Config{DataDir: dir, NoSync: true}
	s := mustStart(t, cfg)
	if got := query(t, s.URL(), "select current_database()"); got != "toolmark" {
		t.Fatalf("got database %q, want toolmark", got)
	}
	conn, err := pgx.Connect(context.Background(), s.URL())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(context.Background(), "create table kept (x int)"); err != nil {
		t.Fatal(err)
	}
	conn.Close(context.Background())
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatalf("second Stop: %v", err)
	}

	// A stale postmaster.pid, as a killed run leaves behind, must not block the next start.
	if err := os.WriteFile(filepath.Join(dir, "postmaster.pid"), []byte("999999\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s = mustStart(t, cfg)
	defer s.Stop(context.Background())
	if got := query(t, s.URL(), "select count(*)::text from kept"); got != "0" {
		t.Fatalf("got %q rows, want the reused table with 0", got)
	}
	if got := query(t, s.URL(), "show listen_addresses"); got != "127.0.0.1" {
		t.Fatalf("got listen_addresses %q, want 127.0.0.1", got)
	}
}

func TestDataDirInUse(t *testing.T) {
	dir := dataDir(t)
	s := mustStart(t, embeddedpg.Config{DataDir: dir, NoSync: true})
	defer s.Stop(context.Background())
	if _, err := embeddedpg.Start(context.Background(), embeddedpg.Config{DataDir: dir}); err == nil {
		t.Fatal("second Start on a data directory in use succeeded, want an error")
	}
}

func TestNoBinaries(t *testing.T) {
	_, err := embeddedpg.Start(context.Background(), embeddedpg.Config{DataDir: t.TempDir(), BinDir: t.TempDir()})
	if err == nil {
		t.Fatal("Start with an empty BinDir succeeded, want an error")
	}
}

// TestPrivateParent starts a server in a directory whose parent only its
// owner may enter, as root's home is: when the tests run as root, postgres
// runs as another user, which is let through by an ACL entry, while the
// parent's mode stays as it was.
func TestPrivateParent(t *testing.T) {
	parent := t.TempDir() // mode 0700
	if err := os.Chmod(parent, 0o700); err != nil {
		t.Fatal(err)
	}
	s := mustStart(t, embeddedpg.Config{DataDir: filepath.Join(parent, "share", "pgdata"), NoSync: true})
	defer s.Stop(context.Background())
	if got := query(t, s.URL(), "select 'up'"); got != "up" {
		t.Fatalf("got %q, want up", got)
	}
	fi, err := os.Stat(parent)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o007 != 0 {
		t.Errorf("parent mode became %v, want no permissions for others", fi.Mode().Perm())
	}
}

// TestKilledParent kills (SIGKILL) a process that started a server: the
// server must shut down by itself, and the next Start on the same data
// directory must work.
func TestKilledParent(t *testing.T) {
	if dir := os.Getenv("EMBEDDEDPG_HELPER_DIR"); dir != "" {
		s, err := embeddedpg.Start(context.Background(), embeddedpg.Config{DataDir: dir, NoSync: true})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("ready", s.Port())
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	if _, err := embeddedpg.FindBinDir(); err != nil && os.Getenv("CI") != "true" {
		t.Skip(err)
	}
	dir := dataDir(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledParent$")
	cmd.Env = append(os.Environ(), "EMBEDDEDPG_HELPER_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready") {
		t.Fatalf("helper: %q, %v", line, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	_ = cmd.Process.Kill()
	_ = cmd.Wait()

	deadline := time.Now().Add(20 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("postgres (pid %d) still runs after its parent was killed", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	s := mustStart(t, embeddedpg.Config{DataDir: dir, NoSync: true})
	defer s.Stop(context.Background())
	if got := query(t, s.URL(), "select 'up'"); got != "up" {
		t.Fatalf("got %q after restart, want up", got)
	}
}
