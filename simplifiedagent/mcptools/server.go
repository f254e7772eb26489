package mcptools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Status is the state of a server's connection.
type Status string

// The states of a server.
const (
	StatusConnecting Status = "connecting"
	StatusConnected  Status = "connected"
	StatusFailed     Status = "failed"
)

// server is one configured server: its connection, kept up by run, and the
// tools it lists. One mutex guards its state.
type server struct {
	cfg     ServerConfig
	inherit map[string]string
	opts    *Options
	log     *slog.Logger

	mu       sync.Mutex
	status   Status
	errText  string // why it failed, a sentence
	sess     *mcp.ClientSession
	ready    chan struct{} // closed when sess is set or the state changes
	tools    []*mcp.Tool
	progress map[string]*pending // open calls by progress token
	nextTok  int
	refresh  chan struct{}
}

func newServer(cfg ServerConfig, inherit map[string]string, opts *Options) *server {
	return &server{cfg: cfg, inherit: inherit, opts: opts, status: StatusConnecting,
		log: opts.Logger.With("mcp_server", cfg.Name), ready: make(chan struct{}),
		progress: map[string]*pending{}, refresh: make(chan struct{}, 1)}
}

// setState changes the state and wakes whoever waits for a session.
func (s *server) setState(st Status, errText string, sess *mcp.ClientSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.errText, s.sess = st, errText, sess
	if st == StatusFailed {
		s.tools = nil
	}
	close(s.ready)
	s.ready = make(chan struct{})
}

// run keeps the server connected until ctx ends: it connects, lists the
// tools, refreshes them when the server says they changed, and reconnects
// with backoff after a failure or when the connection ends.
func (s *server) run(ctx context.Context) {
	fails := 0
	for ctx.Err() == nil {
		sess, end, err := s.connect(ctx)
		if err == nil {
			err = s.listTools(ctx, sess)
			if err != nil {
				_ = sess.Close()
				end()
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			fails++
			wait := backoff(fails, s.opts.MinBackoff, s.opts.MaxBackoff)
			msg := s.failure(err)
			s.log.Warn("MCP server unavailable", "err", err, "retry_in", wait.Round(time.Millisecond).String())
			s.setState(StatusFailed, msg, nil)
			if !sleep(ctx, wait) {
				return
			}
			continue
		}
		fails = 0
		s.setState(StatusConnected, "", sess)
		s.log.Info("MCP server connected", "tools", len(s.toolList()))
		s.serve(ctx, sess)
		end()
		if ctx.Err() != nil {
			return
		}
		s.log.Warn("MCP server connection ended; reconnecting")
		s.setState(StatusConnecting, "", nil)
		if !sleep(ctx, s.opts.MinBackoff/4) {
			return
		}
	}
}

// serve waits for sess to end, refreshing the tools on list_changed.
func (s *server) serve(ctx context.Context, sess *mcp.ClientSession) {
	ended := make(chan struct{})
	go func() {
		_ = sess.Wait()
		close(ended)
	}()
	for {
		select {
		case <-ctx.Done():
			_ = sess.Close()
			<-ended
			return
		case <-ended:
			return
		case <-s.refresh:
			if err := s.listTools(ctx, sess); err != nil {
				s.log.Warn("MCP server's tools could not be listed again", "err", err)
			}
		}
	}
}

// failure is the sentence people see for a connection that failed.
func (s *server) failure(err error) string {
	var ee *exec.Error
	var pe *fs.PathError
	switch {
	case errors.As(err, &ee) || errors.As(err, &pe):
		return fmt.Sprintf("the command of the %s tool server could not be started", s.cfg.Name)
	case s.cfg.Transport == TransportStdio:
		return fmt.Sprintf("the %s tool server did not start", s.cfg.Name)
	}
	return fmt.Sprintf("the %s tool server could not be reached", s.cfg.Name)
}

func backoff(fails int, lo, hi time.Duration) time.Duration {
	d := lo
	for i := 1; i < fails && d < hi; i++ {
		d *= 2
	}
	return min(d, hi)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// connect starts or dials the server and initialises a session; end
// releases what the connection holds once the session is over.
func (s *server) connect(ctx context.Context) (sess *mcp.ClientSession, end context.CancelFunc, err error) {
	var t mcp.Transport
	switch s.cfg.Transport {
	case TransportStdio:
		t = s.command()
	case TransportSSE:
		t = &mcp.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient()}
	default:
		t = &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient(), MaxRetries: -1}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: s.opts.ClientName, Version: s.opts.ClientVersion}, &mcp.ClientOptions{
		Logger:                      s.opts.Logger.With("mcp_server", s.cfg.Name),
		Capabilities:                &mcp.ClientCapabilities{},
		ToolListChangedHandler:      func(context.Context, *mcp.ToolListChangedRequest) { s.listChanged() },
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { s.onProgress(r.Params) },
	})
	// The connection lives on the context it was made with (the SSE
	// transport's stream does), so the connect timeout is a timer, not a
	// context deadline; end cancels it when the session is over.
	cctx, end := context.WithCancel(ctx)
	timer := time.AfterFunc(s.opts.ConnectTimeout, end)
	sess, err = c.Connect(cctx, t, nil)
	if !timer.Stop() && err == nil {
		_ = sess.Close()
		err = errors.New("connect timed out")
	}
	if err != nil {
		end()
		return nil, nil, err
	}
	return sess, end, nil
}

// command is the stdio transport: the server's command with only its
// configured environment plus PATH, HOME and LANG, its stderr to the log.
func (s *server) command() mcp.Transport {
	cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
	cmd.Dir = s.cfg.Cwd
	env := map[string]string{}
	for k, v := range s.inherit {
		env[k] = v
	}
	for k, v := range s.cfg.Env {
		env[k] = v
	}
	cmd.Env = make([]string, 0, len(env))
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	sort.Strings(cmd.Env)
	cmd.Stderr = &stderrLog{log: s.log, name: s.cfg.Name}
	return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
}

// stderrLog writes a server's stderr to the log, a line at a time,
// prefixed with the server's name.
type stderrLog struct {
	log  *slog.Logger
	name string
	mu   sync.Mutex
	buf  []byte
}

func (w *stderrLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			if len(w.buf) > 4096 {
				i = len(w.buf)
			} else {
				return len(p), nil
			}
		}
		line := strings.TrimRight(string(w.buf[:i]), "\r")
		w.buf = w.buf[min(i+1, len(w.buf)):]
		if strings.TrimSpace(line) != "" {
			w.log.Info(w.name + ": " + line)
		}
	}
}

var _ io.Writer = (*stderrLog)(nil)

// httpClient sends the configured headers with every request.
func (s *server) httpClient() *http.Client {
	base := s.opts.HTTPClient
	if base == nil {
		base = &http.Client{}
	}
	c := *base
	c.Transport = headerTransport{next: base.Transport, headers: s.cfg.Headers}
	return &c
}

type headerTransport struct {
	next    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	return next.RoundTrip(r)
}

// listTools lists the server's tools, every page, keeping those its
// config allows.
func (s *server) listTools(ctx context.Context, sess *mcp.ClientSession) error {
	lctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	allow := map[string]bool{}
	for _, n := range s.cfg.Tools {
		allow[n] = true
	}
	var list []*mcp.Tool
	for t, err := range sess.Tools(lctx, nil) {
		if err != nil {
			return fmt.Errorf("listing tools: %w", err)
		}
		if t != nil && (len(allow) == 0 || allow[t.Name]) {
			list = append(list, t)
		}
	}
	s.mu.Lock()
	s.tools = list
	s.mu.Unlock()
	return nil
}

func (s *server) listChanged() {
	select {
	case s.refresh <- struct{}{}:
	default:
	}
}

func (s *server) toolList() []*mcp.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools
}

// session returns the connected session, waiting up to wait for one while
// the server (re)connects.
func (s *server) session(ctx context.Context, wait time.Duration) (*mcp.ClientSession, error) {
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		s.mu.Lock()
		sess, st, ready := s.sess, s.status, s.ready
		s.mu.Unlock()
		if sess != nil {
			return sess, nil
		}
		if st == StatusFailed {
			return nil, errNotConnected
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
			return nil, errNotConnected
		case <-ready:
		}
	}
}

var errNotConnected = errors.New("not connected")

// ServerStatus is a server's state as GET /api/tools shows it.
type ServerStatus struct {
	Name      string   `json:"name"`
	Transport string   `json:"transport"`
	Status    Status   `json:"status"`
	Error     string   `json:"error,omitempty"`
	Tools     []string `json:"tools"` // the names offered to the model
}
