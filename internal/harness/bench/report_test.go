package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"image/png"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/internal/sse"
)

var plotOut = flag.String("plot-out", "", "write TestPlot's PNG to this file, to look at it")

// stream builds a streamResult that received seqs, the first arriving at
// t0+first and made at t0, before the stream connected (replayed, as the
// turn_queued the POST writes), the others live, each delayed by lat, the
// second being the first text_delta, and the last terminal.
func stream(t0 time.Time, first, lat time.Duration, terminal toolmark.EventType, seqs ...int64) streamResult {
	var s streamResult
	for i, seq := range seqs {
		s.check.Observe(seq)
		s.events++
		switch i {
		case 0:
			s.first = t0.Add(first)
			s.replayAges = append(s.replayAges, first)
		case 1:
			s.firstToken = t0.Add(first + 10*time.Millisecond)
			fallthrough
		default:
			typ := toolmark.EventTextDelta
			if i == len(seqs)-1 && terminal != "" {
				typ = terminal
			}
			s.latencies, s.types = append(s.latencies, lat), append(s.types, typ)
		}
	}
	if terminal != "" {
		s.terminal, s.end = terminal, t0.Add(first+time.Duration(len(seqs))*10*time.Millisecond)
	} else {
		s.err = errors.New("reading the stream: connection reset by peer")
	}
	return s
}

func sampleResults() []turnResult {
	t0 := time.Unix(1_700_000_000, 0)
	ok := toolmark.EventTurnCompleted
	return []turnResult{
		{id: "a", t0: t0, streams: []streamResult{
			stream(t0, 50*time.Millisecond, 5*time.Millisecond, ok, 1, 2, 3, 4),
			stream(t0, 60*time.Millisecond, 7*time.Millisecond, ok, 1, 2, 3, 4),
		}},
		{id: "b", t0: t0, streams: []streamResult{
			stream(t0, 80*time.Millisecond, 9*time.Millisecond, ok, 1, 2, 4), // a gap
			stream(t0, 90*time.Millisecond, 9*time.Millisecond, "", 1, 2, 2), // a duplicate, then broken
		}},
		{id: "c", t0: t0, streams: []streamResult{
			{terminal: toolmark.EventTurnFailed, endError: "model unavailable", events: 3, first: t0.Add(70 * time.Millisecond),
				latencies: []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}},
		}},
		{t0: t0, err: errors.New("starting a turn: POST /api/conversations/x/turns: connection refused")},
	}
}

func TestReportAdd(t *testing.T) {
	r := &Report{Turns: 4, Followers: 2, Elapsed: Duration(2 * time.Second), UnloadedTurn: Duration(80 * time.Millisecond)}
	r.add(sampleResults(), window{})
	if r.Completed != 2 || r.Failed != 2 {
		t.Errorf("completed %d, failed %d; want 2, 2", r.Completed, r.Failed)
	}
	if r.Streams != 5 || r.StreamsFailed != 1 || r.Events != 17 {
		t.Errorf("streams %d, failed %d, events %d; want 5, 1, 17", r.Streams, r.StreamsFailed, r.Events)
	}
	if r.Gaps != 1 || r.Missing != 1 || r.Duplicates != 1 {
		t.Errorf("gaps %d, missing %d, duplicates %d; want 1, 1, 1", r.Gaps, r.Missing, r.Duplicates)
	}
	if r.FirstEvent.N != 3 || r.FirstEvent.P50 != 70*time.Millisecond || r.FirstEvent.Max != 80*time.Millisecond {
		t.Errorf("first event %+v", r.FirstEvent)
	}
	if r.WholeTurn.N != 2 || r.WholeTurn.P50 != 90*time.Millisecond || r.WholeTurn.Max != 110*time.Millisecond {
		t.Errorf("whole turn %+v", r.WholeTurn)
	}
	// Each of the four streams built by stream replayed its first event.
	if r.Delivery.N != 13 || r.Delivery.Max != 9*time.Millisecond || r.Delivery.P50 != 7*time.Millisecond {
		t.Errorf("delivery %+v", r.Delivery)
	}
	if r.Replayed.N != 4 || r.Replayed.P50 != 60*time.Millisecond || r.Replayed.Max != 90*time.Millisecond {
		t.Errorf("replayed %+v", r.Replayed)
	}
	if r.Delivery.N+r.Replayed.N != int(r.Events) {
		t.Errorf("delivery n=%d + replayed n=%d, want the %d events", r.Delivery.N, r.Replayed.N, r.Events)
	}
	// First tokens of the first streams of a and b; c sent no text.
	if r.FirstToken.N != 2 || r.FirstToken.P50 != 60*time.Millisecond || r.FirstToken.Max != 90*time.Millisecond {
		t.Errorf("first token %+v", r.FirstToken)
	}
	if r.EventsPerSecond != 8.5 || r.TurnsPerSecond != 1 {
		t.Errorf("%v events/s, %v turns/s; want 8.5, 1", r.EventsPerSecond, r.TurnsPerSecond)
	}
	if r.WholeTurnRatioP50 != 90.0/80 || r.WholeTurnRatioP99 != 110.0/80 {
		t.Errorf("ratios %v, %v", r.WholeTurnRatioP50, r.WholeTurnRatioP99)
	}
	msgs := map[string]int{}
	for _, e := range r.Errors {
		msgs[e.Message] = e.Count
	}
	for _, want := range []string{"turn_failed: model unavailable", "reading the stream: connection reset by peer", "starting a turn: POST /api/conversations/x/turns: connection refused"} {
		if msgs[want] != 1 {
			t.Errorf("errors %v lack %q once", r.Errors, want)
		}
	}
	problems := strings.Join(r.Problems(), "; ")
	for _, want := range []string{"2 of 4 turns failed", "1 of 5 streams failed", "1 gaps (1 events missing)", "1 duplicate events"} {
		if !strings.Contains(problems, want) {
			t.Errorf("problems %q lack %q", problems, want)
		}
	}
}

func TestReportPasses(t *testing.T) {
	t0 := time.Now()
	r := &Report{Turns: 1, Followers: 1}
	r.add([]turnResult{{t0: t0, streams: []streamResult{stream(t0, time.Millisecond, time.Millisecond, toolmark.EventTurnCompleted, 1, 2)}}}, window{})
	if p := r.Problems(); len(p) != 0 {
		t.Errorf("problems %v, want none", p)
	}
	var buf bytes.Buffer
	if err := r.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "0 gaps, 0 duplicates, 0 failed, 0 reconnections: pass") {
		t.Errorf("text lacks the pass line:\n%s", buf.String())
	}
}

func fullReport(turns int, scale time.Duration) *Report {
	sum := func(p50 time.Duration) Summary {
		return Summary{N: turns, Mean: p50, P50: p50, P95: 2 * p50, P99: 3 * p50, Max: 4 * p50}
	}
	return &Report{
		Server: "http://127.0.0.1:1", StartedServer: true, Model: "demo", Question: DefaultQuestion,
		Demo:  &Demo{Delay: 20 * time.Millisecond, Tools: 2, AnswerBytes: 1500},
		Turns: turns, Concurrency: turns, Followers: 1, Completed: turns, Streams: turns, Events: int64(80 * turns),
		Elapsed: Duration(3 * time.Second), EventsPerSecond: float64(80*turns) / 3,
		Delivery: sum(scale), Replayed: sum(scale / 2), FirstEvent: sum(2 * scale), FirstToken: sum(5 * scale), WholeTurn: sum(3 * time.Second),
		UnloadedTurn: Duration(2500 * time.Millisecond), WholeTurnRatioP50: 1.2, WholeTurnRatioP99: 3.6,
		AnswerBytes: 1500, EventsPerTurn: 80,
		ServerCost: &ServerCost{CPU: Duration(time.Second), CPUPerTurn: Duration(time.Second / time.Duration(turns)), Cores: 0.33, PeakRSS: 70 << 20, RSS: 60 << 20},
		Postgres:   &PGCost{Database: "toolmark", Xacts: int64(12 * turns), XactsPerTurn: 12, WALBytes: int64(45000 * turns), WALPerTurn: 45000, WALPerAnswerByte: 30},
	}
}

func TestReportText(t *testing.T) {
	var buf bytes.Buffer
	if err := fullReport(100, 20*time.Millisecond).WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"100 turns, all at once, 1 follower each; demo pace 20ms, tools 2 per turn, answer 1500 bytes",
		"100 completed, 0 failed in 3.00 s",
		"delivery      p50 20.0 ms  p95 40.0 ms  p99 60.0 ms  max 80.0 ms  (n=100)",
		"replayed      100 events made before their stream connected, not in delivery; age p50 10.0 ms  p99 30.0 ms",
		"first event   p50 40.0 ms  p95 80.0 ms  p99 120 ms  max 160 ms  (n=100)",
		"first token   p50 100 ms  p95 200 ms  p99 300 ms  max 400 ms  (n=100)",
		"2.50 s alone; loaded ÷ unloaded: p50 1.20×, p99 3.60×",
		"peak RSS 70.0 MiB",
		"12.0 transactions per turn",
		"WAL 43.9 KiB per turn for a 1.46 KiB answer (30.0×)",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestReportJSON(t *testing.T) {
	b, err := json.Marshal(fullReport(10, 5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if got := m["delivery"].(map[string]any)["p99Ms"]; got != 15.0 {
		t.Errorf("delivery.p99Ms = %v, want 15", got)
	}
	if got := m["replayed"].(map[string]any)["n"]; got != 10.0 {
		t.Errorf("replayed.n = %v, want 10", got)
	}
	if got := m["firstToken"].(map[string]any)["p50Ms"]; got != 25.0 {
		t.Errorf("firstToken.p50Ms = %v, want 25", got)
	}
	if got := m["unloadedTurnMs"]; got != 2500.0 {
		t.Errorf("unloadedTurnMs = %v, want 2500", got)
	}
	if got := m["demo"].(map[string]any)["delayMs"]; got != 20.0 {
		t.Errorf("demo.delayMs = %v, want 20", got)
	}
	if got := m["postgres"].(map[string]any)["transactionsPerTurn"]; got != 12.0 {
		t.Errorf("postgres.transactionsPerTurn = %v, want 12", got)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Delivery.P99 != 15*time.Millisecond || back.FirstToken.P99 != 75*time.Millisecond || back.Demo.Delay != 20*time.Millisecond || time.Duration(back.Elapsed) != 3*time.Second {
		t.Errorf("round trip: delivery %+v, demo %+v, elapsed %v", back.Delivery, back.Demo, back.Elapsed)
	}
}

func sampleSweep() *SweepReport {
	return &SweepReport{Steps: []*Report{
		fullReport(10, 12*time.Millisecond), fullReport(100, 40*time.Millisecond),
		fullReport(1000, 900*time.Millisecond), fullReport(2000, 2*time.Second),
	}}
}

func TestSweepTable(t *testing.T) {
	s := sampleSweep()
	s.Steps[1].Postgres, s.Steps[1].ServerCost = nil, nil // an outside server
	table := s.Table()
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 6 {
		t.Fatalf("got %d lines, want a header, a rule and 4 rows:\n%s", len(lines), table)
	}
	cols := strings.Count(lines[0], "|")
	for i, l := range lines {
		if strings.Count(l, "|") != cols {
			t.Errorf("line %d has %d cells' bars, the header %d: %s", i, strings.Count(l, "|"), cols, l)
		}
	}
	for _, want := range []string{
		"| 10 | 12.0 ms | 24.0 ms | 36.0 ms | 24.0 ms | 48.0 ms | 72.0 ms | 60.0 ms | 120 ms | 180 ms | 3.00 s (1.20×) | 0 | 0 / 0 | 267 | 12.0 | 43.9 KiB (30×) | 100 ms | 70.0 MiB |",
		"| 100 | 40.0 ms | 80.0 ms | 120 ms | 80.0 ms | 160 ms | 240 ms | 200 ms | 400 ms | 600 ms | 3.00 s (1.20×) | 0 | 0 / 0 | 2667 | n/a | n/a | n/a | n/a |",
		"| 2000 | 2.00 s | 4.00 s | 6.00 s | 4.00 s | 8.00 s | 12.0 s | 10.0 s | 20.0 s | 30.0 s |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func TestPlot(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleSweep().WritePlot(&buf); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("the plot is no PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 600 || b.Dy() < 300 {
		t.Errorf("plot is %v, want at least 600×300", b)
	}
	// Not all one colour: something was drawn.
	colours := map[uint32]bool{}
	for x := 0; x < img.Bounds().Dx(); x += 7 {
		for y := 0; y < img.Bounds().Dy(); y += 7 {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[r<<16^g<<8^b] = true
		}
	}
	if len(colours) < 5 {
		t.Errorf("the plot has %d colours, want lines of several", len(colours))
	}
	if *plotOut != "" {
		if err := os.WriteFile(*plotOut, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := (&SweepReport{}).WritePlot(&buf); err == nil {
		t.Error("plotting no step: no error")
	}
}

func TestLogTicks(t *testing.T) {
	var labels []string
	for _, tk := range (logTicks{}).Ticks(3, 1200) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got, want := strings.Join(labels, " "), "5 10 20 50 100 200 500 1000"; got != want {
		t.Errorf("labels %q, want %q", got, want)
	}
}

func TestFormat(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{fmtDur(420 * time.Microsecond), "0.42 ms"},
		{fmtDur(12345 * time.Microsecond), "12.3 ms"},
		{fmtDur(123 * time.Millisecond), "123 ms"},
		{fmtDur(1234 * time.Millisecond), "1.23 s"},
		{fmtDur(-2 * time.Millisecond), "-2.00 ms"},
		{fmtBytes(512), "512 B"},
		{fmtBytes(1536), "1.50 KiB"},
		{fmtBytes(45 * 1024), "45.0 KiB"},
		{fmtBytes(418 << 20), "418 MiB"},
		{fmtBytes(-2048), "-2.00 KiB"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// TestDeliveryTail names the types of the slowest 1% of the delivered
// events, most frequent first.
func TestDeliveryTail(t *testing.T) {
	var s streamResult
	add := func(typ toolmark.EventType, d time.Duration, n int) {
		for range n {
			s.latencies, s.types = append(s.latencies, d), append(s.types, typ)
		}
	}
	add(toolmark.EventTextDelta, time.Millisecond, 990)
	add(toolmark.EventToolCallRunning, 40*time.Millisecond, 6)
	add(toolmark.EventUsage, 30*time.Millisecond, 3)
	add(toolmark.EventTextDelta, 50*time.Millisecond, 1)
	var r Report
	r.add([]turnResult{{streams: []streamResult{s}}}, window{})
	want := []TypeCount{{toolmark.EventToolCallRunning, 6}, {toolmark.EventUsage, 3}, {toolmark.EventTextDelta, 1}}
	if len(r.DeliveryTail) != len(want) {
		t.Fatalf("tail = %v, want %v", r.DeliveryTail, want)
	}
	for i := range want {
		if r.DeliveryTail[i] != want[i] {
			t.Fatalf("tail = %v, want %v", r.DeliveryTail, want)
		}
	}
	if got := fmtTail(r.DeliveryTail); got != "the slowest 1%: tool_call_running 60%, usage 30%, text_delta 10%" {
		t.Errorf("fmtTail = %q", got)
	}
}

// With Poisson arrivals the turns in flight are those of the steady
// window, from the end of the warm-up to the last arrival, not lowered by
// the drain after it (nor the ramp before it); with bursts, the whole run.
func TestInFlightOverSteadyWindow(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ended := func(start, end time.Duration) turnResult {
		return turnResult{t0: t0.Add(start), streams: []streamResult{{terminal: toolmark.EventTurnCompleted, end: t0.Add(end)}}}
	}
	// Four turns of 4 s arriving at 0, 1, 2 and 3 s: two, three, then four
	// in flight during the window from 1 to 3 s (mean 2.5), then a drain of
	// 4 s down to none.
	results := []turnResult{ended(0, 4*time.Second), ended(time.Second, 5*time.Second), ended(2*time.Second, 6*time.Second), ended(3*time.Second, 7*time.Second)}
	whole := &Report{Turns: 4, Elapsed: Duration(7 * time.Second)}
	whole.add(results, window{})
	if want := 16.0 / 7; whole.InFlight != want {
		t.Errorf("burst: in flight %v; want %v (16 turn-seconds over 7 s)", whole.InFlight, want)
	}
	steady := &Report{Turns: 4, Arrivals: ArrivalsPoisson, Elapsed: Duration(7 * time.Second)}
	steady.add(results, window{from: t0.Add(time.Second), to: t0.Add(3 * time.Second)})
	if steady.InFlight != 2.5 {
		t.Errorf("poisson: in flight %v; want 2.5 (5 turn-seconds over the 2 s window)", steady.InFlight)
	}
}

// Live events made after a Poisson load's last arrival are counted apart,
// not in the delivery latencies; events made before it, or replayed, are
// as they were.
func TestCoolDownEventsLeftOut(t *testing.T) {
	connected := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	last := connected.Add(time.Second)
	var r streamResult
	for i, made := range []time.Time{connected.Add(-time.Millisecond), connected.Add(500 * time.Millisecond), last, last.Add(time.Millisecond)} {
		frame, _, _ := sse.AppendEvent(nil, toolmark.Event{Seq: int64(i + 1), TurnID: "t", MessageID: "m", Type: toolmark.EventTextDelta, Time: made, Data: json.RawMessage(`"x"`)})
		at := strings.Index(string(frame), "\ndata: ") + len("\ndata: ")
		fr := client.Frame{ID: strconv.Itoa(i + 1), Event: string(toolmark.EventTextDelta), Data: strings.TrimSuffix(string(frame[at:]), "\n\n")}
		if _, err := r.event(fr, made.Add(2*time.Millisecond), connected, last); err != nil {
			t.Fatal(err)
		}
	}
	if len(r.replayAges) != 1 || len(r.latencies) != 2 || r.coolDown != 1 {
		t.Errorf("replayed %d, live %d, cool-down %d; want 1, 2, 1", len(r.replayAges), len(r.latencies), r.coolDown)
	}
	rep := &Report{Elapsed: Duration(time.Second)}
	rep.addStreams([]streamResult{r}, &latencies{}, map[string]int{})
	if rep.CoolDown != 1 {
		t.Errorf("report cool-down %d; want 1", rep.CoolDown)
	}
}
