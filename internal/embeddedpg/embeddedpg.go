// Package embeddedpg runs a private PostgreSQL server from the server
// binaries installed on the machine, so that toolmark works without a
// DATABASE_URL and its tests need no external database.
//
// Start initialises the data directory on first use (initdb with trust
// authentication), then starts postgres listening on 127.0.0.1 only and on a
// unix socket inside the data directory. Data is kept: the next Start with
// the same DataDir reuses it. When the process runs as root, initdb and
// postgres run as an unprivileged system user (an existing "toolmark" user,
// else "postgres", else a "toolmark" system user created with useradd),
// because PostgreSQL refuses to run as root; a parent of the data directory
// that this user cannot enter (root's home, where the default data
// directory lives) gets a POSIX ACL entry for that user alone, as
// `setfacl -m u:toolmark:x` would.
//
// The server is a child of the calling process and receives SIGINT (fast
// shutdown) if that process dies, so a killed toolmark leaves no server
// behind; a stale postmaster.pid from such a run is removed on the next
// Start.
package embeddedpg

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoBinaries is returned by Start when no PostgreSQL server binaries are
// installed.
var ErrNoBinaries = errors.New("PostgreSQL server binaries not found: install them with `apt-get install postgresql` or set DATABASE_URL")

// Config configures Start. DataDir is required; the other fields have
// defaults.
type Config struct {
	// DataDir is the PostgreSQL data directory, created and initialised on
	// first use. When running as root, a parent directory the unprivileged
	// user cannot search (such as /root) gets a POSIX ACL entry letting that
	// user alone through.
	DataDir string
	// Port is the TCP port on 127.0.0.1; 0 picks a free one.
	Port int
	// Database is created if missing and is the database URL points to;
	// default "toolmark".
	Database string
	// Logger receives the server's log lines at debug level; default
	// slog.Default().
	Logger *slog.Logger
	// NoSync turns off fsync, synchronous_commit and full_page_writes. It is
	// for throwaway test servers only: a machine crash can corrupt the data.
	NoSync bool
	// BinDir is the directory holding postgres, initdb and pg_ctl; empty
	// searches PATH, then /usr/lib/postgresql/*/bin (highest version).
	BinDir string
}

// Server is a running PostgreSQL started by Start.
type Server struct {
	cfg     Config
	binDir  string
	port    int
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	stop    sync.Once
	stopErr error
}

// FindBinDir returns the directory holding the PostgreSQL server binaries:
// the directory of postgres on PATH if initdb is beside it or on PATH too,
// else the highest version under /usr/lib/postgresql. It returns
// ErrNoBinaries when there is none.
func FindBinDir() (string, error) {
	if p, err := exec.LookPath("postgres"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil && hasBinaries(filepath.Dir(real)) {
			return filepath.Dir(real), nil
		}
		if hasBinaries(filepath.Dir(p)) {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if hasBinaries(d) {
			return d, nil
		}
	}
	return "", ErrNoBinaries
}

func versionOf(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

func hasBinaries(dir string) bool {
	for _, name := range []string{"postgres", "initdb", "pg_ctl"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// Start initialises cfg.DataDir if needed, starts PostgreSQL on it and waits
// until it accepts connections and cfg.Database exists. Stop the server with
// Stop.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("starting embedded postgres: no data directory")
	}
	if cfg.Database == "" {
		cfg.Database = "toolmark"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("starting embedded postgres: %w", err)
	}
	cfg.DataDir = dataDir
	binDir := cfg.BinDir
	if binDir == "" {
		if binDir, err = FindBinDir(); err != nil {
			return nil, err
		}
	}
	cred, err := Credential()
	if err != nil {
		return nil, fmt.Errorf("starting embedded postgres: %w", err)
	}
	if err := initDataDir(ctx, cfg, binDir, cred); err != nil {
		return nil, err
	}
	if err := removeStalePID(dataDir); err != nil {
		return nil, err
	}

	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port := cfg.Port
		if port == 0 {
			if port, err = FreePort(); err != nil {
				return nil, fmt.Errorf("starting embedded postgres: %w", err)
			}
		}
		s := &Server{cfg: cfg, binDir: binDir, port: port, exited: make(chan struct{})}
		if lastErr = s.start(ctx, cred); lastErr == nil {
			cfg.Logger.Info("embedded postgres started", "dataDir", dataDir, "port", port, "binDir", binDir)
			return s, nil
		}
		if cfg.Port != 0 || ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

// Credential returns the user to run PostgreSQL (or another server that
// refuses root, such as PgBouncer) as: nil to run as the current user, an
// unprivileged one when that is root.
func Credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("toolmark")
	if err != nil {
		u, err = user.Lookup("postgres")
	}
	if err != nil {
		out, cerr := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "toolmark").CombinedOutput()
		if cerr != nil {
			return nil, fmt.Errorf("running as root and creating an unprivileged user for postgres: %v: %s", cerr, strings.TrimSpace(string(out)))
		}
		if u, err = user.Lookup("toolmark"); err != nil {
			return nil, fmt.Errorf("looking up user toolmark: %w", err)
		}
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGINT}
}

// initDataDir runs initdb unless dataDir already holds a cluster, and makes
// sure the directory belongs to the user PostgreSQL runs as.
func initDataDir(ctx context.Context, cfg Config, binDir string, cred *syscall.Credential) error {
	dataDir := cfg.DataDir
	if _, err := os.Stat(filepath.Join(dataDir, "PG_VERSION")); err == nil {
		if cred != nil {
			if err := chownTree(dataDir, cred); err != nil {
				return err
			}
			return checkReachable(dataDir, cred)
		}
		return nil
	}
	if entries, err := os.ReadDir(dataDir); err == nil && len(entries) > 0 {
		return fmt.Errorf("initialising embedded postgres: %s is not empty and holds no PostgreSQL cluster", dataDir)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("initialising embedded postgres: %w", err)
	}
	if err := os.Chmod(dataDir, 0o700); err != nil {
		return fmt.Errorf("initialising embedded postgres: %w", err)
	}
	if cred != nil {
		if err := os.Chown(dataDir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fmt.Errorf("initialising embedded postgres: %w", err)
		}
		if err := checkReachable(dataDir, cred); err != nil {
			return err
		}
	}
	args := []string{"-D", dataDir, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C"}
	if cfg.NoSync {
		args = append(args, "--no-sync")
	}
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "initdb"), args...)
	cmd.SysProcAttr = sysProcAttr(cred)
	cmd.Dir = dataDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("initialising embedded postgres in %s: %v: %s", dataDir, err, lastLines(string(out), 5))
	}
	cfg.Logger.Info("embedded postgres data directory initialised", "dataDir", dataDir)
	return nil
}

// checkReachable makes sure the user in cred can reach dir: a parent it
// cannot search (root's home, a private temporary directory) gets an ACL
// entry letting that user alone through.
func checkReachable(dir string, cred *syscall.Credential) error {
	if err := grantSearch(dir, cred); err != nil {
		return fmt.Errorf("initialising embedded postgres: %s must be reachable by uid %d, which postgres runs as when started as root: %v; choose another data directory (e.g. /var/lib/toolmark/pgdata)", dir, cred.Uid, err)
	}
	return nil
}

func chownTree(dir string, cred *syscall.Credential) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("starting embedded postgres: %w", err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid == cred.Uid {
		return nil
	}
	err = filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(cred.Uid), int(cred.Gid))
	})
	if err != nil {
		return fmt.Errorf("starting embedded postgres: giving %s to uid %d: %w", dir, cred.Uid, err)
	}
	return nil
}

// removeStalePID removes postmaster.pid when the process it names is not a
// running postgres (left by a killed run), and fails when one still runs.
func removeStalePID(dataDir string) error {
	path := filepath.Join(dataDir, "postmaster.pid")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("starting embedded postgres: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err == nil && pid > 0 {
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if strings.HasPrefix(strings.TrimSpace(string(comm)), "postgres") {
			return fmt.Errorf("starting embedded postgres: %s is in use by a running postgres (pid %d)", dataDir, pid)
		}
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("starting embedded postgres: removing stale %s: %w", path, err)
	}
	return nil
}

// FreePort returns a TCP port free on 127.0.0.1 at the time of the call,
// for a server started on it next (PostgreSQL here, PgBouncer in tests).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) start(ctx context.Context, cred *syscall.Credential) error {
	args := []string{
		"-D", s.cfg.DataDir,
		"-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=" + s.cfg.DataDir,
		"-c", "logging_collector=off",
		"-c", "max_connections=200",
	}
	if s.cfg.NoSync {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	// Not CommandContext: ctx bounds the start-up, not the server's life.
	s.cmd = exec.Command(filepath.Join(s.binDir, "postgres"), args...)
	s.cmd.SysProcAttr = sysProcAttr(cred)
	s.cmd.Dir = s.cfg.DataDir
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		return fmt.Errorf("starting embedded postgres: %w", err)
	}
	s.cmd.Stdout = s.cmd.Stderr
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("starting embedded postgres: %w", err)
	}
	var mu sync.Mutex
	var tail []string
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			if tail = append(tail, line); len(tail) > 5 {
				tail = tail[1:]
			}
			mu.Unlock()
			s.cfg.Logger.Debug("postgres: " + line)
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	go func() {
		<-logDone
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()

	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	adminURL := s.urlFor("postgres")
	for {
		conn, err := pgx.Connect(ctx, adminURL)
		if err == nil {
			err = ensureDatabase(ctx, conn, s.cfg.Database)
			conn.Close(context.Background())
			if err != nil {
				_ = s.Stop(context.Background())
				return fmt.Errorf("starting embedded postgres: %w", err)
			}
			return nil
		}
		select {
		case <-s.exited:
			mu.Lock()
			defer mu.Unlock()
			return fmt.Errorf("starting embedded postgres: server exited (%v): %s", s.waitErr, strings.Join(tail, " | "))
		case <-ctx.Done():
			_ = s.Stop(context.Background())
			return fmt.Errorf("starting embedded postgres: waiting for the server: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func ensureDatabase(ctx context.Context, conn *pgx.Conn, name string) error {
	var exists bool
	if err := conn.QueryRow(ctx, "select exists (select 1 from pg_database where datname = $1)", name).Scan(&exists); err != nil {
		return fmt.Errorf("looking up database %s: %w", name, err)
	}
	if exists {
		return nil
	}
	if _, err := conn.Exec(ctx, "create database "+pgx.Identifier{name}.Sanitize()); err != nil {
		return fmt.Errorf("creating database %s: %w", name, err)
	}
	return nil
}

func (s *Server) urlFor(database string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User("postgres"),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)),
		Path:     "/" + database,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// URL returns the connection URL of the server's database (Config.Database),
// connecting as the superuser postgres over TCP on 127.0.0.1.
func (s *Server) URL() string { return s.urlFor(s.cfg.Database) }

// Port returns the TCP port the server listens on.
func (s *Server) Port() int { return s.port }

// DataDir returns the absolute path of the server's data directory.
func (s *Server) DataDir() string { return s.cfg.DataDir }

// Stop shuts the server down (fast shutdown: open sessions are closed) and
// waits for it to exit, escalating to immediate shutdown and then SIGKILL if
// it takes longer than ctx allows or 30 seconds. It is safe to call more than
// once.
func (s *Server) Stop(ctx context.Context) error {
	s.stop.Do(func() {
		if s.cmd == nil || s.cmd.Process == nil {
			return
		}
		_ = s.cmd.Process.Signal(syscall.SIGINT)
		timer := time.NewTimer(30 * time.Second)
		defer timer.Stop()
		select {
		case <-s.exited:
		case <-ctx.Done():
		case <-timer.C:
		}
		select {
		case <-s.exited:
		default:
			s.cfg.Logger.Warn("embedded postgres did not stop in time; killing it", "dataDir", s.cfg.DataDir)
			_ = s.cmd.Process.Signal(syscall.SIGQUIT)
			select {
			case <-s.exited:
			case <-time.After(5 * time.Second):
				_ = s.cmd.Process.Kill()
				<-s.exited
			}
			s.stopErr = fmt.Errorf("stopping embedded postgres: did not shut down in time")
			return
		}
		s.cfg.Logger.Info("embedded postgres stopped", "dataDir", s.cfg.DataDir)
	})
	return s.stopErr
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
