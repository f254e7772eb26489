package faults

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolmark/toolmark/internal/embeddedpg"
	"github.com/toolmark/toolmark/store"
)

// cluster is the PostgreSQL server and the toolmark replicas of a run.
type cluster struct {
	cfg   Config
	dbURL string
	pg    *embeddedpg.Server // nil when cfg.DatabaseURL is used
	pgCfg embeddedpg.Config
	// dropDB drops the run's database on an external server at the end.
	dropDB func()
	db     *store.DB     // users and tokens
	pool   *pgxpool.Pool // read-only diagnostics of turns
	hc     *http.Client

	mu       sync.Mutex
	started  int
	replicas []*replica
}

// replica is one running `toolmark serve` process.
type replica struct {
	name    string
	url     string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	waitErr error
}

func newCluster(ctx context.Context, cfg Config) (*cluster, error) {
	if cfg.WorkDir == "" {
		return nil, errors.New("faults: no work directory")
	}
	if _, err := os.Stat(cfg.Bin); err != nil {
		return nil, fmt.Errorf("faults: the toolmark binary: %w", err)
	}
	if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
		return nil, err
	}
	c := &cluster{cfg: cfg, hc: &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second, DisableCompression: true,
	}}}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if cfg.DatabaseURL == "" {
		// PostgreSQL runs as another user when the suite runs as root; it
		// must be able to enter the work directory.
		if err := os.Chmod(cfg.WorkDir, 0o711); err != nil {
			return nil, err
		}
		c.pgCfg = embeddedpg.Config{DataDir: filepath.Join(cfg.WorkDir, "pgdata"), NoSync: true, Logger: quiet}
		pg, err := embeddedpg.Start(ctx, c.pgCfg)
		if err != nil {
			return nil, err
		}
		c.pg, c.dbURL = pg, pg.URL()
		c.pgCfg.Port = pg.Port() // a restart keeps the port the replicas know
	} else {
		u, drop, err := freshDatabase(ctx, cfg.DatabaseURL)
		if err != nil {
			return nil, err
		}
		c.dbURL, c.dropDB = u, drop
	}
	db, err := store.Open(ctx, c.dbURL, store.WithLogger(quiet))
	if err != nil {
		c.close()
		return nil, err
	}
	c.db = db
	if err := db.Migrate(ctx); err != nil {
		c.close()
		return nil, err
	}
	if c.pool, err = pgxpool.New(ctx, c.dbURL); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// freshDatabase creates a database of the run's own on the server at
// admin, returns its URL and a function that drops it.
func freshDatabase(ctx context.Context, admin string) (string, func(), error) {
	u, err := url.Parse(admin)
	if err != nil {
		return "", nil, fmt.Errorf("faults: database url: %w", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "toolmark_faults_" + hex.EncodeToString(b[:])
	exec := func(sql string) error {
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := exec("create database " + pgx.Identifier{name}.Sanitize()); err != nil {
		return "", nil, fmt.Errorf("faults: creating a database for the run: %w", err)
	}
	u.Path = "/" + name
	drop := func() { _ = exec("drop database if exists " + pgx.Identifier{name}.Sanitize() + " with (force)") }
	return u.String(), drop, nil
}

func (c *cluster) describeDB() string {
	if c.pg != nil {
		return fmt.Sprintf("embedded PostgreSQL on port %d", c.pg.Port())
	}
	return "a fresh database on DATABASE_URL"
}

// close stops every replica and the database.
func (c *cluster) close() {
	c.stopAll()
	if c.pool != nil {
		c.pool.Close()
	}
	if c.db != nil {
		c.db.Close()
	}
	if c.dropDB != nil {
		c.dropDB()
	}
	if c.pg != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.pg.Stop(ctx)
	}
}

// stopPostgres stops the embedded server (a fast shutdown, as an operator's
// restart does).
func (c *cluster) stopPostgres(ctx context.Context) error { return c.pg.Stop(ctx) }

// startPostgres starts the embedded server again on its port and data.
func (c *cluster) startPostgres(ctx context.Context) error {
	pg, err := embeddedpg.Start(ctx, c.pgCfg)
	if err != nil {
		return err
	}
	c.pg = pg
	return nil
}

// start starts a replica with the given serve flags and waits until it is
// ready.
func (c *cluster) start(ctx context.Context, name string, flags ...string) (*replica, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	c.mu.Lock()
	c.started++
	n := c.started
	c.mu.Unlock()
	args := append([]string{"serve", "--addr", addr, "--auth", "token", "--database-url", c.dbURL,
		"--model-provider", "demo"}, flags...)
	cmd := exec.Command(c.cfg.Bin, args...)
	cmd.Env = serveEnv()
	logPath := filepath.Join(c.cfg.WorkDir, fmt.Sprintf("%03d-%s.log", n, name))
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	r := &replica{name: name, url: "http://" + addr, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		r.waitErr = cmd.Wait()
		logf.Close()
		close(r.exited)
	}()
	c.mu.Lock()
	c.replicas = append(c.replicas, r)
	c.mu.Unlock()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if st, _, _, err := c.do(ctx, r.url, "", "GET", "/readyz", nil); err == nil && st == 200 {
			return r, nil
		}
		select {
		case <-r.exited:
			return nil, fmt.Errorf("replica %s exited at start (%v): %s", name, r.waitErr, lastLines(logPath, 5))
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			r.kill()
			return nil, fmt.Errorf("replica %s not ready after 60 s: %s", name, lastLines(logPath, 5))
		}
	}
}

// serveEnv is the environment of a replica: this process's, without the
// variables that would pick a real model or another database.
func serveEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "DATABASE_URL" || strings.HasPrefix(k, "OPENAI_") || strings.HasPrefix(k, "ANTHROPIC_") || strings.HasPrefix(k, "TOOLMARK_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// kill sends SIGKILL and waits for the process to be gone.
func (r *replica) kill() {
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	<-r.exited
}

// term sends SIGTERM, as an orchestrator does to drain a replica.
func (r *replica) term() { _ = r.cmd.Process.Signal(syscall.SIGTERM) }

// alive reports whether the process still runs.
func (r *replica) alive() bool {
	select {
	case <-r.exited:
		return false
	default:
		return true
	}
}

// stopAll stops every replica still running: SIGTERM, then SIGKILL after
// 30 s.
func (c *cluster) stopAll() {
	c.mu.Lock()
	rs := c.replicas
	c.replicas = nil
	c.mu.Unlock()
	for _, r := range rs {
		if r.alive() {
			r.term()
		}
	}
	for _, r := range rs {
		select {
		case <-r.exited:
		case <-time.After(30 * time.Second):
			r.kill()
		}
	}
}

func lastLines(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// newUser creates a user and returns its API token.
func (c *cluster) newUser(ctx context.Context, name string) (string, error) {
	u, err := c.db.EnsureUser(ctx, name)
	if err != nil {
		return "", err
	}
	return c.db.CreateToken(ctx, u.ID)
}

// send sends one request with the user's token; body is sent as JSON when
// not nil, headers are name, value pairs.
func (c *cluster) send(ctx context.Context, base, token, method, path string, body []byte, headers []string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return c.hc.Do(req)
}

// do sends one request and returns the status, the body and the headers.
func (c *cluster) do(ctx context.Context, base, token, method, path string, body []byte, headers ...string) (int, []byte, http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := c.send(ctx, base, token, method, path, body, headers)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return resp.StatusCode, b, resp.Header, err
}

// status sends one request and returns its status and headers without
// waiting for the body (an event stream stays open).
func (c *cluster) status(ctx context.Context, base, token, method, path string, body []byte, headers ...string) (int, http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := c.send(ctx, base, token, method, path, body, headers)
	if err != nil {
		return 0, nil, err
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header, nil
}

// turnRow is what the database holds about a turn, for diagnostics.
type turnRow struct {
	ID, Conversation, Status string
	LeaseOwner               *string
	LeaseExpires, Finished   *time.Time
	Now                      time.Time
}

// turnRows reads the status and lease of turns straight from the database:
// a diagnosis of why a turn is not final, never a criterion by itself.
func (c *cluster) turnRows(ctx context.Context, ids []string) (map[string]turnRow, error) {
	rows, err := c.pool.Query(ctx, `
		select id, conversation_id, status, lease_owner, lease_expires_at, finished_at, now()
		from turns where id = any($1)`, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]turnRow, len(ids))
	for rows.Next() {
		var t turnRow
		if err := rows.Scan(&t.ID, &t.Conversation, &t.Status, &t.LeaseOwner, &t.LeaseExpires, &t.Finished, &t.Now); err != nil {
			rows.Close()
			return nil, err
		}
		out[t.ID] = t
	}
	return out, rows.Err()
}

// why says why a turn is not final, from its row.
func (t turnRow) why() string {
	switch {
	case t.LeaseOwner == nil:
		return t.Status + " with no lease (nothing will ever finalise it)"
	case t.LeaseExpires != nil && t.LeaseExpires.After(t.Now):
		return fmt.Sprintf("%s, lease held %s more", t.Status, t.LeaseExpires.Sub(t.Now).Round(100*time.Millisecond))
	default:
		return t.Status + ", lease expired, not swept yet"
	}
}
