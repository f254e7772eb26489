package e2e

import (
	"cmp"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/internal/harness/bench"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// TestTUILongAnswer measures the terminal client on a 40 KB answer streamed
// in small chunks (10 ms apart), of each shape (one paragraph, one code
// block, mixed; TOOLMARK_TUI_PERF_SHAPE picks one): the time from the
// server's end of the turn to the screen showing the answer's end, and the
// client's CPU time for the whole answer, its final rendering included. It
// reports the figures (docs/performance.md) and fails when the screen never
// shows the end or the client used more than 2 s of CPU; set
// TOOLMARK_TUI_PERF=1 to run it (it takes about a minute a shape).
func TestTUILongAnswer(t *testing.T) {
	if os.Getenv("TOOLMARK_TUI_PERF") == "" {
		t.Skip("set TOOLMARK_TUI_PERF=1 to measure the terminal client on a long answer")
	}
	shapes := strings.Split(cmp.Or(os.Getenv("TOOLMARK_TUI_PERF_SHAPE"), "paragraph,code,mixed"), ",")
	bin := testserver.Binary(t)
	for _, shape := range shapes {
		t.Run(shape, func(t *testing.T) { longAnswerCPU(t, bin, shape) })
	}
}

// longAnswerCPU measures the client on one shape of answer.
func longAnswerCPU(t *testing.T, bin, shape string) {
	const bound = 2 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	srv, err := bench.StartServer(ctx, bench.ServerConfig{Command: []string{bin, "serve"}, DatabaseURL: pgtest.URL(t),
		Demo: bench.Demo{Delay: 10 * time.Millisecond, Tools: -1, AnswerBytes: 40000, AnswerShape: shape}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	// TOOLMARK_TUI_CPUPROFILE=FILE profiles the client (go tool pprof),
	// one file a shape: FILE.paragraph, FILE.code, FILE.mixed.
	var opts termOptions
	profile := os.Getenv("TOOLMARK_TUI_CPUPROFILE")
	if profile != "" {
		profile += "." + shape
		opts.env = []string{"TOOLMARK_CPUPROFILE=" + profile}
	}
	tm := startTermWith(t, srv.URL, 120, 50, opts)
	tm.waitText("offline demo model")
	tm.typeLine("Write a long answer.")
	c := client.New(srv.URL)
	turnID := activeTurn(t, c)
	pid := clientPID(t, tm)
	var end time.Time
	for ev, err := range c.Events(ctx, turnID, 0) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type.Terminal() {
			end = time.Now()
			break
		}
	}
	st, _ := c.GetTurn(ctx, turnID)
	if st.Turn.Status != toolmark.TurnCompleted {
		t.Fatalf("turn %s", st.Turn.Status)
	}
	words := strings.Fields(st.Content)
	tail := words[len(words)-1]
	tm.waitFor("the answer's end", func(s string) bool { return strings.Contains(s, tail) && !spinnerRE.MatchString(s) })
	lag := time.Since(end)
	// The answer rendered whole (a code block highlighted) follows its end
	// by a frame: its CPU counts too.
	time.Sleep(time.Second)
	cpu := processCPU(t, pid)
	t.Logf("40 KB %s answer: the screen showed its end %v after the server's end; the client used %v of CPU", shape, lag.Round(time.Millisecond), cpu.Round(time.Millisecond))
	if cpu > bound {
		t.Errorf("the client used %v of CPU on a 40 KB %s answer: more than %v", cpu.Round(time.Millisecond), shape, bound)
	}
	if profile != "" {
		tm.typeLine("/quit")
		tm.waitText("EXIT=")
	}
}

// clientPID finds the toolmark chat process of a terminal.
func clientPID(t *testing.T, tm *term) int {
	t.Helper()
	shell := strings.TrimSpace(tm.tmux("display-message", "-p", "-t", "t", "#{pane_pid}"))
	out, err := exec.Command("pgrep", "-f", "-P", shell, "toolmark").Output()
	if err != nil {
		// The shell runs the script, which runs the client.
		out, _ = exec.Command("sh", "-c", "pgrep -f 'toolmark chat' | head -1").Output()
	}
	pid, err := strconv.Atoi(strings.Fields(string(out) + " 0")[0])
	if err != nil || pid == 0 {
		t.Fatalf("no client process under %s", shell)
	}
	return pid
}

// processCPU returns a process's user and system time so far.
func processCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond // clock ticks of 10 ms
}
