package faults

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolmark/toolmark/internal/app"
	"github.com/toolmark/toolmark/internal/embeddedpg"
	"github.com/toolmark/toolmark/internal/harness/bench"
	"github.com/toolmark/toolmark/internal/harness/pgadmin"
	"github.com/toolmark/toolmark/internal/harness/pgbouncer"
)

// cluster is the PostgreSQL server and the toolmark replicas of a run.
type cluster struct {
	cfg   Config
	dbURL string
	pg    *embeddedpg.Server // nil when cfg.DatabaseURL is used
	pgCfg embeddedpg.Config
	// dropDB drops the run's database on an external server at the end.
	dropDB func()
	db     *app.Database // users and tokens
	pool   *pgxpool.Pool // read-only diagnostics of turns
	// hc sends the requests whose raw answers a scenario checks (event
	// streams, probes, hostile requests); api, on the same transport, the
	// calls of package client, each within 30 s.
	hc, api *http.Client

	// pooler, when not nil, is the PgBouncer in transaction mode the
	// replicas reach the database through (poolerURL), with the direct
	// URL as DATABASE_DIRECT_URL when withDirect (see usePooler).
	pooler     *pgbouncer.Server
	poolerURL  string
	withDirect bool

	mu       sync.Mutex
	started  int
	replicas []*replica
}

// replica is one running `toolmark serve` process.
type replica struct {
	*bench.Server
	name string
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
	tr := &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second, DisableCompression: true}
	c := &cluster{cfg: cfg, hc: &http.Client{Transport: tr}, api: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if cfg.DatabaseURL == "" {
		c.pgCfg = embeddedpg.Config{DataDir: filepath.Join(cfg.WorkDir, "pgdata"), NoSync: true, Logger: quiet}
		pg, err := embeddedpg.Start(ctx, c.pgCfg)
		if err != nil {
			return nil, err
		}
		c.pg, c.dbURL = pg, pg.URL()
		c.pgCfg.Port = pg.Port() // a restart keeps the port the replicas know
	} else {
		name := pgadmin.RandomName("toolmark_faults_")
		u, err := pgadmin.Create(ctx, cfg.DatabaseURL, name, "")
		if err != nil {
			return nil, fmt.Errorf("faults: %w", err)
		}
		c.dbURL = u
		c.dropDB = func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = pgadmin.Drop(ctx, cfg.DatabaseURL, name)
		}
	}
	db, err := app.OpenDatabase(ctx, app.Config{DatabaseURL: c.dbURL, Logger: quiet})
	if err != nil {
		c.close()
		return nil, err
	}
	c.db = db
	if c.pool, err = pgxpool.New(ctx, c.dbURL); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
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
	_ = c.usePooler(context.Background(), "")
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

// serve is how a scenario runs its replicas: the demo model's pace and
// the shutdown grace.
type serve struct {
	pace, grace time.Duration
}

// start starts a replica in token auth mode and waits until it is ready.
// Its output goes to a log file of its own in the work directory.
func (c *cluster) start(ctx context.Context, name string, sv serve) (*replica, error) {
	c.mu.Lock()
	c.started++
	n := c.started
	c.mu.Unlock()
	logf, err := os.Create(filepath.Join(c.cfg.WorkDir, fmt.Sprintf("%03d-%s.log", n, name)))
	if err != nil {
		return nil, err
	}
	dbURL, env := c.dbURL, serveEnv()
	if c.pooler != nil {
		dbURL = c.poolerURL
		if c.withDirect {
			env = append(env, "DATABASE_DIRECT_URL="+c.dbURL)
		}
	}
	srv, err := bench.StartServer(ctx, bench.ServerConfig{
		Command: []string{c.cfg.Bin, "serve"}, DatabaseURL: dbURL, Auth: "token",
		Demo: bench.Demo{Delay: sv.pace}, ShutdownGrace: sv.grace, Env: env, Log: logf,
	})
	if err != nil {
		logf.Close()
		return nil, fmt.Errorf("replica %s: %w", name, err)
	}
	go func() {
		<-srv.Done()
		logf.Close()
	}()
	r := &replica{Server: srv, name: name}
	c.mu.Lock()
	c.replicas = append(c.replicas, r)
	c.mu.Unlock()
	return r, nil
}

// serveEnv is the environment of a replica: this process's, without the
// variables that would pick a real model or another database.
func serveEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "DATABASE_URL" || k == "DATABASE_DIRECT_URL" || strings.HasPrefix(k, "OPENAI_") || strings.HasPrefix(k, "ANTHROPIC_") || strings.HasPrefix(k, "TOOLMARK_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// alive reports whether the process still runs.
func (r *replica) alive() bool {
	select {
	case <-r.Done():
		return false
	default:
		return true
	}
}

// stopAll stops every replica still running, all at once: SIGTERM, then
// SIGKILL after 30 s.
func (c *cluster) stopAll() {
	c.mu.Lock()
	rs := c.replicas
	c.replicas = nil
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Go(func() { _ = r.Stop() })
	}
	wg.Wait()
}

// newUser creates a user and returns its API token.
func (c *cluster) newUser(ctx context.Context, name string) (string, error) {
	u, err := c.db.DB.EnsureUser(ctx, name)
	if err != nil {
		return "", err
	}
	return c.db.DB.CreateToken(ctx, u.ID)
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
