package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark/internal/harness/bench"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

func open(t *testing.T, cfg bench.Config) *bench.Bench {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := bench.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// logTo gives the servers' logs to the test log when TOOLMARK_TEST_LOG is set.
func logTo(t *testing.T) *testserver.Buffer {
	var buf testserver.Buffer
	t.Cleanup(func() {
		if os.Getenv("TOOLMARK_TEST_LOG") != "" || t.Failed() {
			t.Logf("server log:\n%s", buf.String())
		}
	})
	return &buf
}

// TestBenchEndToEnd runs tiny benches against real toolmark servers,
// started as child processes on a real PostgreSQL, and checks that every
// figure was measured and that the knobs reached the demo model.
func TestBenchEndToEnd(t *testing.T) {
	bin := testserver.Binary(t)
	dbURL := pgtest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	demo := bench.Demo{Delay: time.Millisecond, Tools: 2, AnswerBytes: 3000}

	t.Run("run", func(t *testing.T) {
		var progress testserver.Buffer
		b := open(t, bench.Config{Command: []string{bin, "serve"}, DatabaseURL: dbURL, Demo: demo,
			Progress: &progress, ServerLog: logTo(t)})
		r, err := b.Run(ctx, bench.Load{Turns: 3, Followers: 2})
		if err != nil {
			t.Fatal(err)
		}
		if p := r.Problems(); len(p) > 0 {
			t.Fatalf("problems: %v (errors %v)", p, r.Errors)
		}
		if r.Completed != 3 || r.Streams != 6 || r.Gaps != 0 || r.Duplicates != 0 || r.Reconnects != 0 {
			t.Errorf("completed %d, streams %d, gaps %d, duplicates %d, reconnects %d; want 3, 6, 0, 0, 0",
				r.Completed, r.Streams, r.Gaps, r.Duplicates, r.Reconnects)
		}
		// turn_queued, turn_started, round_started ×2, two tools' events, text, turn_completed.
		if r.EventsPerTurn < 10 || r.Events < int64(6*10) {
			t.Errorf("%d events per turn, %d in all: want at least 10 per stream", r.EventsPerTurn, r.Events)
		}
		// Every event is in delivery or replayed; every stream replays at
		// least turn_queued, which the POST writes before it opens.
		if r.Delivery.N+r.Replayed.N != int(r.Events) || r.Replayed.N < r.Streams || r.Delivery.N == 0 {
			t.Errorf("delivery n=%d + replayed n=%d, want the %d events, at least %d replayed and some live",
				r.Delivery.N, r.Replayed.N, r.Events, r.Streams)
		}
		if r.FirstEvent.N != 3 || r.FirstToken.N != 3 || r.WholeTurn.N != 3 || r.UnloadedTurn <= 0 {
			t.Errorf("first event n=%d, first token n=%d, whole turn n=%d, unloaded %v",
				r.FirstEvent.N, r.FirstToken.N, r.WholeTurn.N, r.UnloadedTurn)
		}
		// A turn's first text_delta comes after its first event, and before its end.
		if r.FirstToken.P50 < r.FirstEvent.P50 || r.FirstToken.Max > r.WholeTurn.Max {
			t.Errorf("first event %v, first token %v, whole turn %v: out of order", r.FirstEvent, r.FirstToken, r.WholeTurn)
		}
		// The answer text is 3000 bytes; the stored content adds the two tags.
		if r.AnswerBytes < 3000 || r.AnswerBytes > 4000 {
			t.Errorf("answer of %d bytes, want 3000 plus two tags", r.AnswerBytes)
		}
		if c := r.ServerCost; c == nil || c.CPU <= 0 || c.PeakRSS <= 0 || c.RSS <= 0 {
			t.Errorf("server cost %+v: want CPU and memory", c)
		} else if c.Kernel < 0 || c.Kernel > 1 {
			t.Errorf("server cost %+v: the kernel's share is not a share of the CPU", c)
		}
		// Three turns of 3000 bytes are committed in several batches, and
		// their goroutines are scheduled many times.
		if st := r.Stages; st == nil || st.Commits.Count < 3 || st.Commits.Mean <= 0 || st.Commits.P99 < st.Commits.P50 ||
			st.Scheduling.Count == 0 || st.Scheduling.P99 < st.Scheduling.P50 {
			t.Errorf("server stages %+v: want commits and scheduling", st)
		}
		if p := r.Postgres; p == nil || p.Xacts <= 0 || p.WriteXacts <= 0 || p.WALBytes <= 0 || p.WALPerAnswerByte <= 0 {
			t.Errorf("postgres %+v: want transactions and WAL", p)
		}
		if r.Demo == nil || *r.Demo != demo || !r.StartedServer {
			t.Errorf("demo %+v, started %v", r.Demo, r.StartedServer)
		}
		out := progress.String()
		if !strings.Contains(out, "bench: 3 turns, all at once, 2 followers each: 3/3 turns done, 0 failed") {
			t.Errorf("progress lacks the final line:\n%s", out)
		}
		var text bytes.Buffer
		if err := r.WriteText(&text); err != nil || !strings.Contains(text.String(), ": pass") {
			t.Errorf("text (%v):\n%s", err, text.String())
		}
	})

	t.Run("sweep", func(t *testing.T) {
		b := open(t, bench.Config{Command: []string{bin, "serve"}, DatabaseURL: dbURL, Demo: demo, ServerLog: logTo(t)})
		s, err := b.Sweep(ctx, []int{1, 3}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Steps) != 2 || s.Steps[0].Turns != 1 || s.Steps[1].Turns != 3 || s.Steps[1].Concurrency != 3 {
			t.Fatalf("steps %+v", s.Steps)
		}
		if p := s.Problems(); len(p) > 0 {
			t.Errorf("problems %v", p)
		}
		if rows := strings.Count(s.Table(), "\n"); rows != 4 {
			t.Errorf("table of %d lines, want 4:\n%s", rows, s.Table())
		}
		var buf bytes.Buffer
		if err := s.WritePlot(&buf); err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(&buf); err != nil {
			t.Errorf("plot: %v", err)
		}
	})

	t.Run("poisson", func(t *testing.T) {
		b := open(t, bench.Config{Command: []string{bin, "serve"}, DatabaseURL: dbURL, Demo: demo, ServerLog: logTo(t)})
		r, err := b.Run(ctx, bench.Load{Turns: 6, Arrivals: bench.ArrivalsPoisson, Rate: 20, Warmup: time.Nanosecond})
		if err != nil {
			t.Fatal(err)
		}
		if p := r.Problems(); len(p) > 0 || r.Completed != 6 {
			t.Fatalf("completed %d, problems %v (errors %v)", r.Completed, p, r.Errors)
		}
		// The first arrival is drawn after the start, so none falls in a
		// warm-up of 1 ns; every turn's start is counted from its schedule.
		if r.Arrivals != bench.ArrivalsPoisson || r.Rate != 20 || r.Late.N != 6 || r.FirstEvent.N != 6 || r.InFlight <= 0 {
			t.Errorf("arrivals %q rate %v, late n=%d, first event n=%d, in flight %v", r.Arrivals, r.Rate, r.Late.N, r.FirstEvent.N, r.InFlight)
		}
		if r.Wire.Bytes <= 0 || r.Wire.Bytes != r.Wire.Decoded || r.Wire.Frames != 0 {
			t.Errorf("wire %+v: an event stream, uncompressed, without render frames", r.Wire)
		}
	})

	t.Run("render", func(t *testing.T) {
		b := open(t, bench.Config{Command: []string{bin, "serve"}, DatabaseURL: dbURL, Demo: demo, ServerLog: logTo(t)})
		r, err := b.Run(ctx, bench.Load{Turns: 2, Render: true})
		if err != nil {
			t.Fatal(err)
		}
		if p := r.Problems(); len(p) > 0 || r.Completed != 2 {
			t.Fatalf("completed %d, problems %v (errors %v)", r.Completed, p, r.Errors)
		}
		if r.Wire.Frames < 2 || r.Wire.Bytes <= 0 || r.Wire.Decoded < r.Wire.Bytes || r.Wire.PerAnswerByte <= 0 {
			t.Errorf("wire %+v: want render frames and their bytes", r.Wire)
		}
	})

	t.Run("capacity", func(t *testing.T) {
		b := open(t, bench.Config{Command: []string{bin, "serve"}, DatabaseURL: dbURL, Demo: demo, ServerLog: logTo(t)})
		// A target no run can miss and one none can meet bound the search.
		// Repeat 3: a step whose first run is far from the target (here
		// far under it) is not run again.
		c, err := b.FindCapacity(ctx, bench.CapacityLoad{Target: time.Hour, Window: 2 * time.Second, Start: 2, Max: 4, Repeat: 3})
		if err != nil {
			t.Fatal(err)
		}
		// Both steps meet the target; the best is the one that had the
		// more turns in flight as measured, which with Poisson arrivals
		// over 2 s need not be the one that asked for more.
		if len(c.Steps) != 2 || len(c.Searched) != 2 || c.Best == nil || c.Capacity <= 0 || len(c.Problems()) > 0 {
			t.Errorf("runs %d, steps %d, best %v, capacity %v, problems %v", len(c.Steps), len(c.Searched), c.Best, c.Capacity, c.Problems())
		} else if most := max(c.Steps[0].InFlight, c.Steps[1].InFlight); c.Best.InFlight != most || c.Capacity != most {
			t.Errorf("best in flight %v, capacity %v; want the steps' most, %v", c.Best.InFlight, c.Capacity, most)
		} else if s := c.Searched; s[0].Concurrency != 2 || s[1].Concurrency != 4 || !s[0].Pass || !s[1].Pass || len(s[0].Runs) != 1 || len(s[1].Runs) != 1 {
			t.Errorf("steps %+v: want 2 and 4 turns in flight, one passing run each", s)
		}
		// A target between half and twice what a run measures is near
		// enough to run the step again: each step then has two or three
		// runs, which agree or not, and stands by the median one.
		target := time.Duration(c.Steps[0].Delivery.P99)
		c, err = b.FindCapacity(ctx, bench.CapacityLoad{Target: target, Window: 2 * time.Second, Start: 2, Max: 2, Repeat: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Searched) == 0 {
			t.Fatal("no step")
		}
		s := c.Searched[0] // a failing step 2 is followed by a step of 1
		for _, i := range s.Runs {
			t.Logf("target %v: run %d, p99 %v", target, i, c.Steps[i].Delivery.P99)
		}
		if p99 := time.Duration(c.Steps[0].Delivery.P99); p99 > target/2 && p99 <= 2*target && (len(s.Runs) < 2 || len(s.Runs) > 3) {
			t.Errorf("first run's p99 %v near the target %v, but the step had %d runs", p99, target, len(s.Runs))
		}
		if s.Pass && c.Best != c.Steps[s.Median] {
			t.Errorf("step %+v, best %v: the best is the median run of the passing step", s, c.Best)
		}
		c, err = b.FindCapacity(ctx, bench.CapacityLoad{Target: time.Nanosecond, Window: 2 * time.Second, Start: 2, Max: 4})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Steps) == 0 || c.Best != nil || len(c.Problems()) != 1 {
			t.Errorf("steps %d, best %v, problems %v: want steps all over the target", len(c.Steps), c.Best, c.Problems())
		}
		var text bytes.Buffer
		if err := c.WriteText(&text); err != nil || !strings.Contains(text.String(), "no step stayed under the target") {
			t.Errorf("text (%v):\n%s", err, text.String())
		}
	})

	t.Run("idle followers", func(t *testing.T) {
		b := open(t, bench.Config{Command: []string{bin, "serve"}, DatabaseURL: dbURL, Demo: demo, ServerLog: logTo(t)})
		r, err := b.Idle(ctx, bench.IdleLoad{Streams: 300, Turns: 2})
		if err != nil {
			t.Fatal(err)
		}
		if r.Opened != 300 || r.Failed != 0 || len(r.Problems()) > 0 || r.Frames != 0 {
			t.Errorf("opened %d, failed %d, errors %v, render frames %d", r.Opened, r.Failed, r.Errors, r.Frames)
		}
		if r.RSSBefore <= 0 || r.RSSAfter <= 0 || r.PeakRSS < r.RSSAfter {
			t.Errorf("RSS before %d, after %d, peak %d", r.RSSBefore, r.RSSAfter, r.PeakRSS)
		}
		// 300 open streams hold goroutines and buffers on the server.
		if r.PerStream <= 0 {
			t.Errorf("%.0f bytes per idle stream (RSS %d → %d), want more than 0", r.PerStream, r.RSSBefore, r.RSSAfter)
		}
	})

	t.Run("idle pages", func(t *testing.T) {
		b := open(t, bench.Config{Command: []string{bin, "serve"}, DatabaseURL: dbURL, Demo: demo, ServerLog: logTo(t)})
		r, err := b.Idle(ctx, bench.IdleLoad{Streams: 100, Turns: 2, Render: true})
		if err != nil {
			t.Fatal(err)
		}
		var text bytes.Buffer
		if err := r.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		// Each page got the frame of the turn as it stands, as the page does.
		if r.Opened != 100 || r.Failed != 0 || r.Frames < 100 || !strings.Contains(text.String(), "100 rendering streams") {
			t.Errorf("opened %d, failed %d, errors %v, render frames %d:\n%s", r.Opened, r.Failed, r.Errors, r.Frames, text.String())
		}
	})

	t.Run("history", func(t *testing.T) {
		db := pgtest.URL(t) // a database of its own: the history stays in it
		b := open(t, bench.Config{Command: []string{bin, "serve"}, DatabaseURL: db, Demo: demo, History: 600, ServerLog: logTo(t)})
		for run := range 2 { // written once, before the first run
			r, err := b.Run(ctx, bench.Load{Turns: 2})
			if err != nil {
				t.Fatal(err)
			}
			if r.Completed != 2 || len(r.Problems()) > 0 || r.History != 600 {
				t.Errorf("run %d: completed %d, problems %v, history %d", run, r.Completed, r.Problems(), r.History)
			}
			var text bytes.Buffer
			if err := r.WriteText(&text); err != nil || !strings.Contains(text.String(), "a database of 600 earlier turns") {
				t.Errorf("text (%v):\n%s", err, text.String())
			}
		}
		conn, err := pgx.Connect(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var turns, messages, calls, v7 int
		err = conn.QueryRow(ctx, `
			select count(*), sum((select count(*) from messages m where m.turn_id = t.id)),
				sum((select count(*) from tool_calls c where c.turn_id = t.id)), count(*) filter (where substr(t.id, 15, 1) = '7')
			from turns t join conversations c on c.id = t.conversation_id join users u on u.id = c.owner_id
			where u.name = $1 and t.status = 'completed'`, bench.HistoryOwner).Scan(&turns, &messages, &calls, &v7)
		if err != nil {
			t.Fatal(err)
		}
		if turns != 600 || messages != 1200 || calls != 1200 || v7 != 600 {
			t.Errorf("history: %d turns, %d messages, %d tool calls, %d ids of version 7; want 600, 1200, 1200, 600", turns, messages, calls, v7)
		}
		if _, err := bench.Open(ctx, bench.Config{Server: "http://127.0.0.1:1", History: 10}); err == nil {
			t.Error("a history for a running server: no error")
		}
	})

	t.Run("outside server", func(t *testing.T) {
		srv, err := bench.StartServer(ctx, bench.ServerConfig{Command: []string{bin, "serve"}, DatabaseURL: dbURL, Demo: demo, Log: logTo(t)})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Stop()
		withDB := open(t, bench.Config{Server: srv.URL, DatabaseURL: dbURL})
		r, err := withDB.Run(ctx, bench.Load{Turns: 2})
		if err != nil {
			t.Fatal(err)
		}
		if r.Completed != 2 || r.StartedServer || r.ServerCost != nil || r.Demo != nil || r.Postgres == nil || r.Postgres.Xacts <= 0 {
			t.Errorf("completed %d, started %v, server cost %+v, demo %+v, postgres %+v", r.Completed, r.StartedServer, r.ServerCost, r.Demo, r.Postgres)
		}
		if r.Stages == nil || r.Stages.Commits.Count == 0 {
			t.Errorf("server stages %+v: an outside server's /metrics should be read too", r.Stages)
		}
		clientOnly := open(t, bench.Config{Server: srv.URL})
		r, err = clientOnly.Run(ctx, bench.Load{Turns: 2, Concurrency: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r.Completed != 2 || r.Postgres != nil || r.Concurrency != 1 {
			t.Errorf("completed %d, postgres %+v, concurrency %d", r.Completed, r.Postgres, r.Concurrency)
		}
		if _, err := clientOnly.Idle(ctx, bench.IdleLoad{Streams: 1}); err == nil {
			t.Error("idle followers on an outside server: no error")
		}
	})

	t.Run("command", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, bin, "bench", "--turns", "2", "--followers", "2", "--demo-delay", "1ms",
			"--demo-tools", "-1", "--stats-settle", "0", "--json", "--database-url", dbURL)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Env = append(os.Environ(), "GOMAXPROCS=")
		if err := cmd.Run(); err != nil {
			t.Fatalf("toolmark bench: %v\n%s", err, stderr.String())
		}
		var r bench.Report
		if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
			t.Fatalf("decoding --json output: %v\n%s", err, stdout.String())
		}
		if r.Completed != 2 || r.Streams != 4 || r.Demo == nil || r.Demo.Tools != -1 || r.Postgres == nil || r.ServerCost == nil {
			t.Errorf("report %+v", r)
		}
		if r.ClientCost.Procs != 1 {
			t.Errorf("the bench ran on GOMAXPROCS %d, want 1 (--procs' default)", r.ClientCost.Procs)
		}
		if !strings.Contains(stderr.String(), "2/2 turns done") {
			t.Errorf("stderr lacks the progress line:\n%s", stderr.String())
		}
		cmd = exec.CommandContext(ctx, bin, "bench", "--server", "http://127.0.0.1:1", "--demo-tools", "3")
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "--demo-tools applies to a server the bench starts") {
			t.Errorf("--demo-tools with --server: %v, %s", err, out)
		}
		// GOMAXPROCS wins over --procs' default, as over Go's own.
		stdout.Reset()
		stderr.Reset()
		cmd = exec.CommandContext(ctx, bin, "bench", "--turns", "1", "--demo-delay", "1ms", "--demo-tools", "-1",
			"--stats-settle", "0", "--json", "--database-url", dbURL)
		cmd.Stdout, cmd.Stderr, cmd.Env = &stdout, &stderr, append(os.Environ(), "GOMAXPROCS=3")
		if err := cmd.Run(); err != nil {
			t.Fatalf("toolmark bench with GOMAXPROCS=3: %v\n%s", err, stderr.String())
		}
		if err := json.Unmarshal(stdout.Bytes(), &r); err != nil || r.ClientCost.Procs != 3 {
			t.Errorf("with GOMAXPROCS=3 the bench ran on GOMAXPROCS %d (%v), want 3", r.ClientCost.Procs, err)
		}
		cmd = exec.CommandContext(ctx, bin, "bench", "--procs", "-1")
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "--procs must be 0 or more, not -1") {
			t.Errorf("--procs -1: %v, %s", err, out)
		}
		// A sweep whose first step fails says why, not that it has nothing to plot.
		cmd = exec.CommandContext(ctx, bin, "bench", "--server", "http://127.0.0.1:1", "--sweep", "1,2", "--plot", filepath.Join(t.TempDir(), "p.png"))
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "reaching the server") {
			t.Errorf("a sweep that cannot reach its server: %v, %s", err, out)
		}
	})
}
