// Package pgbouncer starts a PgBouncer process in transaction mode in front
// of a PostgreSQL server, for tests and the fault suite: the pooler that
// teams running toolmark on managed PostgreSQL reach their database
// through. It listens on a free loopback port with a generated
// configuration in a directory of its own, passes every database name on
// to the server with the server URL's user and password, and runs as an
// unprivileged user when started as root (PgBouncer refuses root).
//
//	pb, err := pgbouncer.Start(ctx, pgbouncer.Config{Server: serverURL})
//	…
//	pooled := pb.Pooled(databaseURL) // the same database, through the pooler
//	defer pb.Stop()
package pgbouncer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/toolmark/toolmark/internal/embeddedpg"
)

// Config configures Start.
type Config struct {
	// Server is the URL of the PostgreSQL server (any database on it); its
	// host, port, user and password are what PgBouncer connects with.
	Server string
	// PoolSize is the number of server connections per database [20].
	PoolSize int
	// Dir holds the configuration; "" makes a temporary directory,
	// removed by Stop.
	Dir string
	// Ignore lists start-up parameters PgBouncer takes and ignores (as
	// ignore_startup_parameters), besides extra_float_digits: a pooler
	// that refuses none.
	Ignore []string
}

// Server is a running PgBouncer.
type Server struct {
	cmd     *exec.Cmd
	port    int
	dir     string
	tempDir bool
	done    chan struct{}
	log     *os.File // its standard error
}

// ErrNotInstalled is returned by Start when no pgbouncer binary is found.
var ErrNotInstalled = errors.New("pgbouncer is not installed (apt-get install pgbouncer, or scripts/need-pgbouncer.sh)")

// binary returns the path of the pgbouncer binary: on PATH, or in
// /usr/sbin where Debian's package puts it.
func binary() (string, error) {
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/sbin/pgbouncer", "/usr/local/sbin/pgbouncer", "/usr/local/bin/pgbouncer"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", ErrNotInstalled
}

// Start writes the configuration, starts PgBouncer and waits until it
// accepts connections.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	bin, err := binary()
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(cfg.Server)
	if err != nil {
		return nil, fmt.Errorf("pgbouncer: parsing the server url: %w", err)
	}
	if cfg.PoolSize <= 0 {
		cfg.PoolSize = 20
	}
	s := &Server{dir: cfg.Dir, done: make(chan struct{})}
	if s.dir == "" {
		if s.dir, err = os.MkdirTemp("", "toolmark-pgbouncer-"); err != nil {
			return nil, err
		}
		s.tempDir = true
	}
	// The user PgBouncer runs as reads its configuration.
	if err := os.Chmod(s.dir, 0o755); err != nil {
		return nil, err
	}
	if s.port, err = embeddedpg.FreePort(); err != nil {
		return nil, err
	}
	ini := filepath.Join(s.dir, "pgbouncer.ini")
	if err := os.WriteFile(ini, []byte(config(u, s.port, cfg.PoolSize, cfg.Ignore)), 0o644); err != nil {
		return nil, err
	}
	cred, err := embeddedpg.Credential()
	if err != nil {
		return nil, err
	}
	s.cmd = exec.Command(bin, ini)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if s.log, err = os.Create(filepath.Join(s.dir, "pgbouncer.log")); err != nil {
		s.cleanup()
		return nil, err
	}
	s.cmd.Stderr = s.log
	if err := s.cmd.Start(); err != nil {
		s.cleanup()
		return nil, fmt.Errorf("pgbouncer: %w", err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	if err := s.waitReady(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// config is PgBouncer's configuration: every database name passed on to
// the server (the "*" entry) as the server URL's user, in transaction
// mode, on 127.0.0.1:port only. auth_type any accepts any client user, as
// the servers of the tests accept any with trust.
func config(u *url.URL, port, poolSize int, ignore []string) string {
	host, pgPort := u.Hostname(), u.Port()
	if host == "" {
		host = "127.0.0.1"
	}
	if pgPort == "" {
		pgPort = "5432"
	}
	db := fmt.Sprintf("host=%s port=%s", host, pgPort)
	if name := u.User.Username(); name != "" {
		db += " user=" + name
	}
	if pw, ok := u.User.Password(); ok {
		db += " password=" + pw
	}
	return fmt.Sprintf(`[databases]
* = %s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = any
pool_mode = transaction
default_pool_size = %d
max_client_conn = 2000
server_lifetime = 3600
server_idle_timeout = 600
ignore_startup_parameters = %s
`, db, port, poolSize, strings.Join(append([]string{"extra_float_digits"}, ignore...), ","))
}

// Port returns the port PgBouncer listens on.
func (s *Server) Port() int { return s.port }

// Pooled returns databaseURL (a database on the server) rewritten to go
// through PgBouncer: same user, password, database and parameters.
func (s *Server) Pooled(databaseURL string) (string, error) {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return "", fmt.Errorf("pgbouncer: parsing the database url: %w", err)
	}
	u.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
	q := u.Query()
	q.Del("host")
	q.Del("port")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Stop stops PgBouncer and removes its temporary directory.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	}
	s.cleanup()
}

func (s *Server) cleanup() {
	if s.log != nil {
		s.log.Close()
	}
	if s.tempDir {
		_ = os.RemoveAll(s.dir)
	}
}

// waitReady waits until PgBouncer accepts connections, it exits, or 10 s
// pass.
func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-s.done:
			out, _ := os.ReadFile(s.log.Name())
			return fmt.Errorf("pgbouncer exited at start: %s", strings.TrimSpace(string(out)))
		case <-ctx.Done():
			return fmt.Errorf("pgbouncer did not start: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
