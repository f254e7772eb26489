package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ServerConfig says how to start a toolmark server as a child process.
// Zero values leave the server's own defaults, except where said.
type ServerConfig struct {
	// Command is the toolmark binary and the "serve" subcommand, as in
	// {os.Executable(), "serve"}; the bench adds its own flags.
	Command []string
	// DatabaseURL is the server's PostgreSQL (required).
	DatabaseURL string
	// Auth is the server's --auth: "local" (the default here) or "token".
	Auth string
	// MaxTurns is the server's --max-turns.
	MaxTurns int
	// Demo shapes the demo model's turns; its zero value streams without
	// pausing.
	Demo Demo
	// ShutdownGrace is the server's --shutdown-grace.
	ShutdownGrace time.Duration
	// LogLevel is the server's --log-level.
	LogLevel string
	// Env is the server's environment; nil passes this process's.
	Env []string
	// ModelFromEnv leaves the choice of the model to the server's
	// environment (OPENAI_BASE_URL, ANTHROPIC_API_KEY, …) instead of the
	// demo model.
	ModelFromEnv bool
	// Log receives the server's own log (its stderr); nil keeps only the
	// last lines, for the error when it fails to start.
	Log io.Writer
}

// Demo holds the knobs of the demo model that the bench passes to the
// server it starts.
type Demo struct {
	// Delay is the pause before each streamed chunk, the pace of a turn
	// (--demo-delay); 0 streams without pausing.
	Delay time.Duration
	// Tools is the number of tool calls per turn (--demo-tools): 0 plans
	// them from the question, -1 makes none.
	Tools int
	// AnswerBytes is the length of the answer text (--demo-answer-bytes);
	// 0 keeps the demo's own answer.
	AnswerBytes int
	// AnswerShape is what the padding is made of (--demo-answer-shape):
	// paragraph (the default), code or mixed.
	AnswerShape string
}

type demoJSON struct {
	Delay       Duration `json:"delayMs"`
	Tools       int      `json:"tools"`
	AnswerBytes int      `json:"answerBytes"`
	AnswerShape string   `json:"answerShape,omitempty"`
}

// MarshalJSON writes the delay in milliseconds.
func (d Demo) MarshalJSON() ([]byte, error) {
	return json.Marshal(demoJSON{Duration(d.Delay), d.Tools, d.AnswerBytes, d.AnswerShape})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (d *Demo) UnmarshalJSON(b []byte) error {
	var j demoJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*d = Demo{time.Duration(j.Delay), j.Tools, j.AnswerBytes, j.AnswerShape}
	return nil
}

// Server is a toolmark server the bench started.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:PORT.
	URL  string
	cmd  *exec.Cmd
	tail *tailBuffer
	done chan struct{}
	err  error // the process's exit, once done is closed
	stop sync.Once
}

// StartServer starts `toolmark serve` on a loopback port the server picks
// itself, with the demo model, and waits until its /readyz answers 200.
// The child gets SIGTERM if the calling process dies.
func StartServer(ctx context.Context, cfg ServerConfig) (*Server, error) {
	if len(cfg.Command) == 0 {
		return nil, errors.New("no command to start the server with")
	}
	if cfg.DatabaseURL == "" {
		return nil, errors.New("the server needs a database URL")
	}
	if cfg.Auth == "" {
		cfg.Auth = "local"
	}
	args := append(cfg.Command[1:len(cfg.Command):len(cfg.Command)],
		"--addr", "127.0.0.1:0", // the server prints the port it got
		"--auth", cfg.Auth,
		"--database-url", cfg.DatabaseURL,
		"--demo-delay", cfg.Demo.Delay.String(),
		"--demo-tools", strconv.Itoa(cfg.Demo.Tools),
		"--demo-answer-bytes", strconv.Itoa(cfg.Demo.AnswerBytes),
		"--demo-answer-shape", cfg.Demo.AnswerShape,
	)
	if !cfg.ModelFromEnv {
		args = append(args, "--model-provider", "demo")
	}
	if cfg.MaxTurns > 0 {
		args = append(args, "--max-turns", strconv.Itoa(cfg.MaxTurns))
	}
	if cfg.ShutdownGrace > 0 {
		args = append(args, "--shutdown-grace", cfg.ShutdownGrace.String())
	}
	if cfg.LogLevel != "" {
		args = append(args, "--log-level", cfg.LogLevel)
	}
	cmd := exec.Command(cfg.Command[0], args...)
	cmd.Env = cfg.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	s := &Server{cmd: cmd, tail: &tailBuffer{max: 4 << 10}, done: make(chan struct{})}
	var log io.Writer = s.tail
	if cfg.Log != nil {
		log = io.MultiWriter(s.tail, cfg.Log)
	}
	cmd.Stderr = log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("starting the server: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the server: %w", err)
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u := servingURL.FindString(sc.Text()); u != "" {
				select {
				case urls <- u:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		s.err = cmd.Wait()
		close(s.done)
	}()
	if err := s.waitReady(ctx, urls, 2*time.Minute); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

// servingURL finds the address in the line `toolmark serve` prints once it
// listens: "toolmark is serving at http://127.0.0.1:PORT/ …".
var servingURL = regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+`)

// waitReady waits for the server to say where it listens, then polls GET
// /readyz until it answers 200.
func (s *Server) waitReady(ctx context.Context, urls <-chan string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	select {
	case s.URL = <-urls:
	case <-s.done:
		return fmt.Errorf("the server exited while starting (%v): %s", s.err, s.tail.lastLines(5))
	case <-ctx.Done():
		return fmt.Errorf("the server did not start within %v: %s", limit, s.tail.lastLines(5))
	}
	hc := &http.Client{Timeout: 2 * time.Second}
	defer hc.CloseIdleConnections()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/readyz", nil)
		if resp, err := hc.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("the server exited while starting (%v): %s", s.err, s.tail.lastLines(5))
		case <-ctx.Done():
			return fmt.Errorf("the server did not answer within %v: %s", limit, s.tail.lastLines(5))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// usage reads the server's CPU time and memory from /proc.
func (s *Server) usage() (proc, error) { return readProc(s.cmd.Process.Pid) }

// Stop stops the server with SIGTERM, as Ctrl-C would, and waits for it;
// after 30 s it is killed. It is safe to call more than once, and at once
// from several goroutines.
func (s *Server) Stop() error {
	var err error
	s.stop.Do(func() {
		s.Terminate()
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
			err = fmt.Errorf("the server did not stop within 30 s: %s", s.tail.lastLines(5))
		}
	})
	return err
}

// Terminate sends SIGTERM, as an orchestrator draining the server does,
// and returns at once; Done says when the server has exited.
func (s *Server) Terminate() { _ = s.cmd.Process.Signal(syscall.SIGTERM) }

// Kill kills the server with SIGKILL, as a crash would, and waits until
// it is gone.
func (s *Server) Kill() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

// Done is closed once the server's process has exited.
func (s *Server) Done() <-chan struct{} { return s.done }

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

// lastLines returns the last n complete lines, joined by " | ".
func (t *tailBuffer) lastLines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(string(bytes.TrimSpace(t.b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return "(no output)"
	}
	return strings.Join(lines, " | ")
}
