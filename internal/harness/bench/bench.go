package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/internal/embeddedpg"
	"github.com/toolmark/toolmark/internal/harness/pgbouncer"
)

// DefaultQuestion is the message of every turn unless Config says another.
const DefaultQuestion = "How does resume work, and what happens on cancellation?"

// DefaultStatsSettle is how long the bench lets a server stay idle before it
// reads PostgreSQL's transaction counts: a backend publishes its counts
// when it has been idle for up to 10 s (PostgreSQL's PGSTAT_IDLE_INTERVAL),
// so without the wait some of the set-up would be counted in the run.
const DefaultStatsSettle = 11 * time.Second

// Config configures a Bench. Zero values take the defaults given.
type Config struct {
	// Server is the URL of a running server to measure; several URLs,
	// comma-separated, are replicas of one deployment, measured as the
	// bench's own replicas are (see replicas.go). Empty: the bench starts
	// its own servers with Command.
	Server string
	// Token is an API token, for a server in token auth mode.
	Token string
	// Command starts a server: the toolmark binary and "serve".
	Command []string
	// DatabaseURL is PostgreSQL for the servers the bench starts, and the
	// source of the PostgreSQL figures for any server. Empty with a
	// started server: the bench starts an embedded PostgreSQL in a
	// temporary directory, removed by Close.
	DatabaseURL string
	// Demo shapes the turns of the servers the bench starts.
	Demo Demo
	// MaxTurns is the started servers' --max-turns (default 100 000).
	MaxTurns int
	// Question is the message of every turn (default DefaultQuestion).
	Question string
	// StatsSettle is how long the server stays idle before PostgreSQL's
	// transaction counts are read, before and (for a server the bench did
	// not start) after a run; see DefaultStatsSettle. 0 does not wait: the
	// transaction counts are then approximate.
	StatsSettle time.Duration
	// Progress receives a progress line while a run goes on; nil is
	// silent. ProgressTTY rewrites the line in place (for a terminal)
	// instead of writing a line every few seconds.
	Progress    io.Writer
	ProgressTTY bool
	// ServerLog receives the started servers' logs; nil discards them.
	ServerLog io.Writer
	// History, when above 0, is how many finished turns the database holds
	// before the first run, as one that has served a while does: the bench
	// writes them once (HistoryOwner's, each turn in a conversation of its
	// own with its messages and tool calls, not its events), once its first
	// server has migrated the schema. Only with a server the bench starts.
	History int
	// Replicas is how many servers the bench starts on its PostgreSQL
	// (default 1); see replicas.go.
	Replicas int
	// Pooler puts PgBouncer in transaction mode between the started
	// servers and PostgreSQL: PoolerNone, PoolerOnly or PoolerWithDirect.
	Pooler string
}

// Bench measures one server, or servers it starts.
type Bench struct {
	cfg   Config
	pg    *embeddedpg.Server
	dir   string // the embedded PostgreSQL's temporary directory
	dbURL string
	stats *pgStats // nil without a database URL
	out   *progress
	// history is whether the history (Config.History) is written.
	history bool
	bouncer *pgbouncer.Server // Config.Pooler's
}

// Open prepares a bench: it starts an embedded PostgreSQL when it needs
// one and connects to PostgreSQL's statistics.
func Open(ctx context.Context, cfg Config) (*Bench, error) {
	if cfg.Server == "" && len(cfg.Command) == 0 {
		return nil, errors.New("no server to measure: give its URL or a command to start one")
	}
	if cfg.History > 0 && cfg.Server != "" {
		return nil, errors.New("a history is written for a server the bench starts, not for a running one")
	}
	if err := cfg.checkReplicas(); err != nil {
		return nil, err
	}
	if cfg.Question == "" {
		cfg.Question = DefaultQuestion
	}
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = 100_000
	}
	b := &Bench{cfg: cfg, dbURL: cfg.DatabaseURL, out: newProgress(cfg.Progress, cfg.ProgressTTY)}
	if b.dbURL == "" && cfg.Server == "" {
		if err := b.startPostgres(ctx); err != nil {
			return nil, err
		}
	}
	if b.dbURL != "" {
		st, err := openPGStats(ctx, b.dbURL)
		if err != nil {
			b.Close()
			return nil, err
		}
		b.stats = st
	}
	if err := b.startPooler(ctx); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// startPostgres starts an embedded PostgreSQL with a fresh data directory,
// with the durability settings of a production server.
func (b *Bench) startPostgres(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "toolmark-bench-")
	if err != nil {
		return err
	}
	b.out.say("starting an embedded PostgreSQL in %s", dir)
	pg, err := embeddedpg.Start(ctx, embeddedpg.Config{
		DataDir:  filepath.Join(dir, "pgdata"),
		Database: "toolmark",
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		os.RemoveAll(dir)
		return err
	}
	b.pg, b.dir, b.dbURL = pg, dir, pg.URL()
	return nil
}

// Close stops the embedded PostgreSQL, if the bench started one, and
// removes its data.
func (b *Bench) Close() error {
	var err error
	if b.bouncer != nil {
		b.bouncer.Stop()
		b.bouncer = nil
	}
	if b.pg != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = b.pg.Stop(ctx)
		cancel()
		b.pg = nil
	}
	if b.dir != "" {
		os.RemoveAll(b.dir)
		b.dir = ""
	}
	return err
}

// target is the server one run measures.
type target struct {
	url    string
	server *Server // nil for a server the bench did not start
	// peers are the other replicas the bench started (Config.Replicas);
	// peerURLs the other replicas' URLs, started or given (Config.Server).
	peers    []*Server
	peerURLs []string
}

// startTarget starts a fresh server, or names the given one.
func (b *Bench) startTarget(ctx context.Context, demo Demo) (*target, error) {
	if b.cfg.Server != "" {
		urls := strings.Split(b.cfg.Server, ",")
		for i, u := range urls {
			urls[i] = strings.TrimRight(strings.TrimSpace(u), "/")
		}
		return &target{url: urls[0], peerURLs: urls[1:]}, nil
	}
	b.out.say("starting toolmark serve (demo pace %v, tools %s, answer %s)", demo.Delay, toolsText(demo.Tools), answerText(demo.AnswerBytes, demo.AnswerShape))
	dbURL, env, err := b.serverDB()
	if err != nil {
		return nil, err
	}
	t := &target{}
	for i := range b.cfg.Replicas {
		s, err := StartServer(ctx, ServerConfig{
			Command: b.cfg.Command, DatabaseURL: dbURL, Env: env, MaxTurns: b.cfg.MaxTurns, Demo: demo,
			ShutdownGrace: 5 * time.Second, LogLevel: "warn", Log: b.cfg.ServerLog,
		})
		if err != nil {
			_ = t.stop()
			return nil, err
		}
		if i == 0 {
			t.url, t.server = s.URL, s
		} else {
			t.peers, t.peerURLs = append(t.peers, s), append(t.peerURLs, s.URL)
		}
	}
	if b.cfg.History > 0 && !b.history {
		if err := b.writeHistory(ctx, b.cfg.History); err != nil {
			_ = t.stop()
			return nil, err
		}
		b.history = true
	}
	return t, nil
}

// stop stops a started server.
func (t *target) stop() error {
	for _, p := range t.peers {
		_ = p.Stop()
	}
	if t.server == nil {
		return nil
	}
	return t.server.Stop()
}

// session is the bench's HTTP side for one target: an API client and a
// streamer sharing one transport.
type session struct {
	api     *client.Client
	streams *streamer
	hc      *http.Client
	// ring holds the sessions of every replica of the target, this one at
	// idx; empty with one server (see replica and follower).
	ring []*session
	idx  int
}

// session returns a session for t on a fresh transport, with the
// sessions of its other replicas in its ring, on the same transport.
func (b *Bench) session(t *target) *session {
	hc := newHTTPClient()
	s := b.sessionOn(t.url, hc)
	if len(t.peerURLs) == 0 {
		return s
	}
	s.ring = []*session{s}
	for i, u := range t.peerURLs {
		ps := b.sessionOn(u, hc)
		ps.idx = i + 1
		s.ring = append(s.ring, ps)
	}
	for _, ps := range s.ring[1:] {
		ps.ring = s.ring
	}
	return s
}

func (b *Bench) sessionOn(url string, hc *http.Client) *session {
	opts := []client.Option{client.WithHTTPClient(hc)}
	if b.cfg.Token != "" {
		opts = append(opts, client.WithToken(b.cfg.Token))
	}
	return &session{
		api:     client.New(url, opts...),
		streams: &streamer{base: url, token: b.cfg.Token, hc: hc},
		hc:      hc,
	}
}

// close closes the session's idle connections.
func (s *session) close() { s.hc.CloseIdleConnections() }

// settle waits for PostgreSQL's statistics to catch up (see StatsSettle).
func (b *Bench) settle(ctx context.Context) error {
	if b.stats == nil || b.cfg.StatsSettle <= 0 {
		return nil
	}
	b.out.say("waiting %v for PostgreSQL's statistics to settle", b.cfg.StatsSettle)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(b.cfg.StatsSettle):
		return nil
	}
}

func toolsText(n int) string {
	switch {
	case n == 0:
		return "planned from the question"
	case n < 0:
		return "none"
	}
	return fmt.Sprint(n, " per turn")
}

func answerText(n int, shape string) string {
	if n <= 0 {
		return "as the demo writes it"
	}
	if shape == "" {
		shape = "paragraph"
	}
	return fmt.Sprintf("%d bytes (%s)", n, shape)
}
