package bench

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// Duration is a time.Duration written to JSON as milliseconds, rounded to
// the microsecond: every duration of the bench's JSON is one.
type Duration time.Duration

// MarshalJSON writes d in milliseconds.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(math.Round(float64(d)/1e3) / 1e3)
}

// UnmarshalJSON reads milliseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var ms float64
	if err := json.Unmarshal(b, &ms); err != nil {
		return err
	}
	*d = Duration(math.Round(ms * 1e6))
	return nil
}

// Report is what one load run measured. Durations are in milliseconds in
// its JSON form, sizes in bytes.
type Report struct {
	Server        string `json:"server"`
	StartedServer bool   `json:"startedServer"` // the bench started the server
	Model         string `json:"model"`
	Demo          *Demo  `json:"demo,omitempty"`     // knobs of a started server
	History       int    `json:"history,omitempty"`  // finished turns the database held before the runs (Config.History)
	Replicas      int    `json:"replicas,omitempty"` // servers on one PostgreSQL: started (Config.Replicas) or given (Config.Server)
	Pooler        string `json:"pooler,omitempty"`   // Config.Pooler
	Question      string `json:"question"`

	Turns       int      `json:"turns"`
	Concurrency int      `json:"concurrency"`      // turns in flight at once (burst arrivals)
	Followers   int      `json:"followersPerTurn"` // streams per turn
	Arrivals    string   `json:"arrivals"`         // burst or poisson
	Rate        float64  `json:"ratePerSecond,omitempty"`
	Warmup      Duration `json:"warmupMs,omitempty"`
	Render      bool     `json:"render,omitempty"`    // followers read rendered HTML, compression accepted
	Protocols   []string `json:"protocols,omitempty"` // a follower of each of these protocols per turn besides (Load.Protocols)

	// InFlight is the mean number of turns in flight. With Poisson
	// arrivals it is taken over the steady window, from the end of the
	// warm-up to the last arrival: the concurrency the rate made (the
	// rate × a turn's duration), not lowered by the ramp at the start and
	// the drain at the end. With burst arrivals it is the sum of the turns'
	// durations ÷ the run's length.
	InFlight float64 `json:"meanTurnsInFlight"`
	// CoolDown counts the live events made after the last arrival of a
	// Poisson load, while it drained: they are left out of Delivery, as
	// the turns that start during the warm-up are, so that the latencies
	// are those of the steady load.
	CoolDown int64 `json:"coolDownEvents,omitempty"`
	// Late is how long after its scheduled instant each POST was sent: the
	// bench's own lag, which should stay near 0.
	Late Summary `json:"lateStarts"`
	// Wire is what one follower of a turn received, on average: bytes on
	// the wire and decoded, against the answer's bytes, and render frames.
	Wire WireCost `json:"wire"`

	Completed     int   `json:"completed"` // turns whose first follower saw turn_completed
	Failed        int   `json:"failed"`    // turns not started, ended otherwise, or whose first stream broke
	Streams       int   `json:"streams"`
	StreamsFailed int   `json:"streamsFailed"` // streams that broke and could not be resumed
	Reconnects    int   `json:"reconnects"`    // streams reopened with Last-Event-ID after a broken connection
	Gaps          int   `json:"gaps"`          // events that arrived past the next expected seq
	Missing       int64 `json:"missingEvents"` // events skipped by those gaps
	Duplicates    int   `json:"duplicates"`    // events that arrived again
	Events        int64 `json:"events"`        // events delivered over all streams

	Elapsed         Duration `json:"elapsedMs"` // from starting the turns to the end of the last
	EventsPerSecond float64  `json:"eventsPerSecond"`
	TurnsPerSecond  float64  `json:"turnsPerSecond"`

	Delivery Summary `json:"delivery"` // event time → arrival, every event made after its stream connected
	// DeliveryTail is the types of the slowest 1% of the delivered
	// events, most frequent first: where the tail sits.
	DeliveryTail []TypeCount `json:"deliveryTail,omitempty"`
	Replayed     Summary     `json:"replayed"`   // the same for the events made before: their age at arrival
	FirstEvent   Summary     `json:"firstEvent"` // POST sent → first event of the turn's first stream
	FirstToken   Summary     `json:"firstToken"` // POST sent → first text_delta on the turn's first stream
	WholeTurn    Summary     `json:"wholeTurn"`  // POST sent → terminal event, completed turns

	UnloadedTurn      Duration `json:"unloadedTurnMs"` // the same turn run alone before the load
	WholeTurnRatioP50 float64  `json:"wholeTurnRatioP50"`
	WholeTurnRatioP99 float64  `json:"wholeTurnRatioP99"`
	AnswerBytes       int      `json:"answerBytes"`   // stored content of the turn run alone
	EventsPerTurn     int      `json:"eventsPerTurn"` // events of the turn run alone

	ServerCost *ServerCost `json:"serverCost,omitempty"` // a started server only
	// Stages is what the server's /metrics tell of the load: its commits'
	// durations and its goroutines' waits for a processor.
	Stages     *ServerStages `json:"serverStages,omitempty"`
	Postgres   *PGCost       `json:"postgres,omitempty"` // with a database URL
	ClientCost ClientCost    `json:"clientCost"`

	Errors []ErrorCount `json:"errors,omitempty"`
}

// WireCost is what a turn's follower received, on average over the
// turns' first followers.
type WireCost struct {
	Bytes          float64 `json:"bytesPerTurn"`        // as sent over the connection (compressed or not)
	Decoded        float64 `json:"decodedBytesPerTurn"` // after decompression
	PerAnswerByte  float64 `json:"perAnswerByte"`       // Bytes ÷ the answer's bytes
	DecodedPerByte float64 `json:"decodedPerAnswerByte"`
	Frames         float64 `json:"renderFramesPerTurn,omitempty"`
}

// ServerCost is what a started server spent during the load.
type ServerCost struct {
	CPU        Duration `json:"cpuMs"`        // user + system time during the load
	CPUPerTurn Duration `json:"cpuPerTurnMs"` //
	Cores      float64  `json:"cores"`        // CPU time ÷ elapsed time
	Kernel     float64  `json:"kernelShare"`  // stime ÷ (utime + stime): the share of the CPU spent in the kernel
	PeakRSS    int64    `json:"peakRssBytes"` // VmHWM at the end: the process's peak
	RSS        int64    `json:"rssBytes"`     // VmRSS at the end
}

// PGCost is what PostgreSQL did during the load.
type PGCost struct {
	Database          string   `json:"database"`
	Xacts             int64    `json:"transactions"` // commits + rollbacks in the database
	XactsPerTurn      float64  `json:"transactionsPerTurn"`
	WriteXacts        int64    `json:"writeTransactions"` // transaction ids used, whole cluster
	WriteXactsPerTurn float64  `json:"writeTransactionsPerTurn"`
	WALBytes          int64    `json:"walBytes"` // whole cluster
	WALPerTurn        float64  `json:"walBytesPerTurn"`
	WALPerAnswerByte  float64  `json:"walPerAnswerByte"` // WAL per turn ÷ answer bytes
	CPU               Duration `json:"cpuMs,omitempty"`  // a PostgreSQL on this machine only
	CPUPerTurn        Duration `json:"cpuPerTurnMs,omitempty"`
}

func newPGCost(d pgDelta, turns, answer int, dbURL string) *PGCost {
	n := float64(turns)
	c := &PGCost{
		Database: databaseName(dbURL),
		Xacts:    d.Xacts, XactsPerTurn: float64(d.Xacts) / n,
		WriteXacts: d.XIDs, WriteXactsPerTurn: float64(d.XIDs) / n,
		WALBytes: d.WALBytes, WALPerTurn: float64(d.WALBytes) / n,
		CPU: Duration(d.CPU), CPUPerTurn: Duration(float64(d.CPU) / n),
	}
	c.WALPerAnswerByte = ratio(c.WALPerTurn, float64(answer))
	return c
}

// ClientCost is what the bench itself spent: if it nears the machine's
// cores, the figures measure the bench as much as the server.
type ClientCost struct {
	CPU     Duration `json:"cpuMs"`
	Cores   float64  `json:"cores"`
	PeakRSS int64    `json:"peakRssBytes"`
	// Procs is the bench's GOMAXPROCS: how many cores its Go code ran on
	// at once.
	Procs int `json:"procs"`
}

// TypeCount is an event type and how many events of it.
type TypeCount struct {
	Type  toolmark.EventType `json:"type"`
	Count int                `json:"count"`
}

// tailTypes counts the types of the slowest 1% of the delivered events,
// most frequent first.
func tailTypes(l latencies) []TypeCount {
	n := min(len(l.delivery), len(l.types))
	if n == 0 {
		return nil
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(l.delivery[b], l.delivery[a]) })
	counts := map[toolmark.EventType]int{}
	for _, i := range idx[:max(1, n/100)] {
		counts[l.types[i]]++
	}
	out := make([]TypeCount, 0, len(counts))
	for t, c := range counts {
		out = append(out, TypeCount{t, c})
	}
	slices.SortFunc(out, func(a, b TypeCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(string(a.Type), string(b.Type)))
	})
	return out
}

// ErrorCount is one kind of failure and how often it happened.
type ErrorCount struct {
	Message string `json:"message"`
	Count   int    `json:"count"`
}

// add folds the turns' results into the report; steady is the steady
// window of a Poisson load (InFlight), zero for a burst.
func (r *Report) add(results []turnResult, steady window) {
	var lat latencies
	var first, token, whole, late []time.Duration
	var busy, steadyBusy time.Duration
	var wire, body, frames float64
	errs := map[string]int{}
	for _, t := range results {
		late = append(late, t.late)
		if err := t.failure(); err != nil {
			r.Failed++
			errs[toolcallmarkup.OneLine(err.Error(), 200)]++
		} else {
			r.Completed++
			busy += t.streams[0].end.Sub(t.t0)
			steadyBusy += steady.overlap(t.t0, t.streams[0].end)
			if !t.warmup {
				whole = append(whole, t.streams[0].end.Sub(t.t0))
			}
		}
		if len(t.streams) > 0 {
			wire, body, frames = wire+float64(t.streams[0].wire), body+float64(t.streams[0].body), frames+float64(t.streams[0].frames)
		}
		if t.warmup {
			r.addStreams(t.streams, nil, errs)
			continue
		}
		if len(t.streams) > 0 && t.streams[0].events > 0 {
			first = append(first, t.streams[0].first.Sub(t.t0))
		}
		if len(t.streams) > 0 && !t.streams[0].firstToken.IsZero() {
			token = append(token, t.streams[0].firstToken.Sub(t.t0))
		}
		r.addStreams(t.streams, &lat, errs)
	}
	r.Delivery, r.Replayed = Summarize(lat.delivery), Summarize(lat.replayed)
	r.DeliveryTail = tailTypes(lat)
	r.FirstEvent, r.FirstToken, r.WholeTurn = Summarize(first), Summarize(token), Summarize(whole)
	r.Late = Summarize(late)
	if n := float64(len(results)); n > 0 {
		r.Wire = WireCost{Bytes: wire / n, Decoded: body / n, Frames: frames / n}
		r.Wire.PerAnswerByte = ratio(r.Wire.Bytes, float64(r.AnswerBytes))
		r.Wire.DecodedPerByte = ratio(r.Wire.Decoded, float64(r.AnswerBytes))
	}
	if r.Elapsed > 0 {
		secs := time.Duration(r.Elapsed).Seconds()
		r.EventsPerSecond = float64(r.Events) / secs
		r.TurnsPerSecond = float64(r.Completed) / secs
	}
	if d := steady.to.Sub(steady.from); d > 0 {
		r.InFlight = ratio(float64(steadyBusy), float64(d))
	} else {
		r.InFlight = ratio(float64(busy), float64(r.Elapsed))
	}
	r.WholeTurnRatioP50 = ratio(float64(r.WholeTurn.P50), float64(r.UnloadedTurn))
	r.WholeTurnRatioP99 = ratio(float64(r.WholeTurn.P99), float64(r.UnloadedTurn))
	for msg, n := range errs {
		r.Errors = append(r.Errors, ErrorCount{msg, n})
	}
	slices.SortFunc(r.Errors, func(a, b ErrorCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Message, b.Message))
	})
	if len(r.Errors) > 5 {
		r.Errors = r.Errors[:5]
	}
}

// latencies collects the delivery latencies (with their events' types)
// and replay ages of streams.
type latencies struct {
	delivery, replayed []time.Duration
	types              []toolmark.EventType
}

// addStreams counts a turn's streams into the report's integrity figures
// and, when into is not nil, appends their latencies to it.
func (r *Report) addStreams(streams []streamResult, into *latencies, errs map[string]int) {
	for i, s := range streams {
		r.Streams++
		r.Events += int64(s.events)
		r.Reconnects += s.reconnects
		r.Gaps += s.check.Gaps
		r.Missing += s.check.Missing
		r.Duplicates += s.check.Duplicates
		r.CoolDown += int64(s.coolDown)
		if into != nil {
			into.delivery = append(into.delivery, s.latencies...)
			into.types = append(into.types, s.types...)
			into.replayed = append(into.replayed, s.replayAges...)
		}
		if s.err != nil {
			r.StreamsFailed++
			if i > 0 { // the first stream's error is the turn's
				errs[toolcallmarkup.OneLine(s.err.Error(), 200)]++
			}
		}
	}
}

// Problems lists what makes the run a failure: failed turns or streams,
// gaps, duplicates. Empty means it passed.
func (r *Report) Problems() []string {
	var p []string
	if r.Failed > 0 {
		p = append(p, fmt.Sprintf("%d of %d turns failed", r.Failed, r.Turns))
	}
	if r.StreamsFailed > 0 {
		p = append(p, fmt.Sprintf("%d of %d streams failed", r.StreamsFailed, r.Streams))
	}
	if r.Gaps > 0 {
		p = append(p, fmt.Sprintf("%d gaps (%d events missing)", r.Gaps, r.Missing))
	}
	if r.Duplicates > 0 {
		p = append(p, fmt.Sprintf("%d duplicate events", r.Duplicates))
	}
	return p
}

// poolerText says how the started servers reached PostgreSQL.
func poolerText(p string) string {
	switch p {
	case PoolerOnly:
		return "through PgBouncer (transaction mode), no direct URL"
	case PoolerWithDirect:
		return "through PgBouncer (transaction mode) with DATABASE_DIRECT_URL"
	}
	return "directly"
}

// WriteText writes the report for a person.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	line := func(label, format string, args ...any) {
		fmt.Fprintf(&b, "%-13s %s\n", label, fmt.Sprintf(format, args...))
	}
	shape := Load{Turns: r.Turns, Concurrency: r.Concurrency, Followers: r.Followers, Arrivals: r.Arrivals, Rate: r.Rate, Render: r.Render, Protocols: r.Protocols}.describe()
	if r.Demo != nil {
		shape += fmt.Sprintf("; demo pace %v, tools %s, answer %s", r.Demo.Delay, toolsText(r.Demo.Tools), answerText(r.Demo.AnswerBytes, r.Demo.AnswerShape))
	}
	if r.History > 0 {
		shape += fmt.Sprintf("; a database of %d earlier turns", r.History)
	}
	line("load", "%s", shape)
	line("server", "%s (model %s%s)", r.Server, r.Model, map[bool]string{true: ", started by the bench", false: ""}[r.StartedServer])
	if r.Replicas > 1 || r.Pooler != "" {
		how := poolerText(r.Pooler)
		if !r.StartedServer {
			how = "reaching PostgreSQL as deployed"
		}
		line("replicas", "%d on one PostgreSQL, followers on other replicas than their turn's; %s", r.Replicas, how)
	}
	inFlight := "in flight on average"
	if r.Arrivals == ArrivalsPoisson {
		inFlight = "in flight while turns arrived"
	}
	line("turns", "%d completed, %d failed in %s (%.1f turns/s, %.1f %s)", r.Completed, r.Failed, fmtDur(time.Duration(r.Elapsed)), r.TurnsPerSecond, r.InFlight, inFlight)
	if r.Arrivals == ArrivalsPoisson {
		line("arrivals", "open loop: the bench sent each POST %s after its scheduled instant (p99 %s); latencies count from the schedule; warm-up %s and the %d events made after the last arrival left out",
			fmtDur(r.Late.P50), fmtDur(r.Late.P99), fmtDur(time.Duration(r.Warmup)), r.CoolDown)
	}
	line("events", "%d delivered over %d streams (%.0f events/s); %d per turn", r.Events, r.Streams, r.EventsPerSecond, r.EventsPerTurn)
	verdict := "pass"
	if len(r.Problems()) > 0 {
		verdict = "FAIL"
	}
	line("streams", "%d gaps, %d duplicates, %d failed, %d reconnections: %s", r.Gaps, r.Duplicates, r.StreamsFailed, r.Reconnects, verdict)
	line("delivery", "%s", fmtSummary(r.Delivery))
	if len(r.DeliveryTail) > 0 {
		line("", "%s", fmtTail(r.DeliveryTail))
	}
	line("replayed", "%s", fmtReplayed(r.Replayed))
	line("first event", "%s", fmtSummary(r.FirstEvent))
	line("first token", "%s", fmtSummary(r.FirstToken))
	line("whole turn", "%s", fmtSummary(r.WholeTurn))
	if r.Wire.Bytes > 0 {
		what := "events"
		if r.Render {
			what = fmt.Sprintf("%.0f render frames", r.Wire.Frames)
		}
		line("on the wire", "%s per turn per follower (%.1f× the answer), %s decoded (%.1f×): %s",
			fmtBytes(r.Wire.Bytes), r.Wire.PerAnswerByte, fmtBytes(r.Wire.Decoded), r.Wire.DecodedPerByte, what)
	}
	line("unloaded", "%s alone; loaded ÷ unloaded: p50 %.2f×, p99 %.2f×", fmtDur(time.Duration(r.UnloadedTurn)), r.WholeTurnRatioP50, r.WholeTurnRatioP99)
	if c := r.ServerCost; c != nil {
		line("server cost", "CPU %s (%s per turn, %.2f cores, %.0f %% in the kernel), peak RSS %s", fmtDur(time.Duration(c.CPU)), fmtDur(time.Duration(c.CPUPerTurn)), c.Cores, 100*c.Kernel, fmtBytes(float64(c.PeakRSS)))
	}
	if st := r.Stages; st != nil {
		line("commits", "%s", fmtHist(st.Commits))
		line("scheduling", "server goroutines waited to run: %s", fmtHist(st.Scheduling))
	}
	if p := r.Postgres; p != nil {
		line("postgresql", "%.1f transactions per turn (%.1f writing), WAL %s per turn for a %s answer (%.1f×)",
			p.XactsPerTurn, p.WriteXactsPerTurn, fmtBytes(p.WALPerTurn), fmtBytes(float64(r.AnswerBytes)), p.WALPerAnswerByte)
		if p.CPU > 0 {
			line("", "CPU %s (%s per turn)", fmtDur(time.Duration(p.CPU)), fmtDur(time.Duration(p.CPUPerTurn)))
		}
	}
	line("bench cost", "CPU %s (%.2f cores, GOMAXPROCS %d), peak RSS %s", fmtDur(time.Duration(r.ClientCost.CPU)), r.ClientCost.Cores, r.ClientCost.Procs, fmtBytes(float64(r.ClientCost.PeakRSS)))
	for _, e := range r.Errors {
		line("error", "%d× %s", e.Count, e.Message)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func atOnce(conc, turns int) string {
	if conc >= turns {
		return "all at once"
	}
	return fmt.Sprintf("%d at once", conc)
}

func fmtSummary(s Summary) string {
	if s.N == 0 {
		return "n/a"
	}
	return fmt.Sprintf("p50 %s  p95 %s  p99 %s  max %s  (n=%d)", fmtDur(s.P50), fmtDur(s.P95), fmtDur(s.P99), fmtDur(s.Max), s.N)
}

// fmtReplayed writes how many events were replayed and how old they were.
func fmtReplayed(s Summary) string {
	if s.N == 0 {
		return "none (every event was made after its stream connected)"
	}
	return fmt.Sprintf("%d events made before their stream connected, not in delivery; age p50 %s  p99 %s", s.N, fmtDur(s.P50), fmtDur(s.P99))
}

// fmtDur writes d with three significant digits: 0.42 ms, 12.3 ms, 1.23 s.
func fmtDur(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + fmtDur(-d)
	case d > 0 && d < 10*time.Microsecond: // the scheduler's smallest buckets
		return sig3(float64(d)/1e3) + " µs"
	case d < time.Second:
		return sig3(float64(d)/1e6) + " ms"
	case d < 100*time.Second:
		return sig3(d.Seconds()) + " s"
	}
	return d.Round(time.Second).String()
}

// fmtBytes writes n bytes in B, KiB, MiB or GiB.
func fmtBytes(n float64) string {
	if n < 0 {
		return "-" + fmtBytes(-n)
	}
	units := []string{"B", "KiB", "MiB", "GiB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", n)
	}
	return sig3(n) + " " + units[i]
}

// sig3 writes f with three significant digits (at least the units).
func sig3(f float64) string {
	switch {
	case f >= 100:
		return fmt.Sprintf("%.0f", f)
	case f >= 10:
		return fmt.Sprintf("%.1f", f)
	}
	return fmt.Sprintf("%.2f", f)
}

// fmtTail names the types of the slowest events, the four most frequent.
func fmtTail(tail []TypeCount) string {
	total := 0
	for _, t := range tail {
		total += t.Count
	}
	parts := make([]string, 0, 5)
	for i, t := range tail {
		if i == 4 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprintf("%s %.0f%%", t.Type, 100*float64(t.Count)/float64(total)))
	}
	return "the slowest 1%: " + strings.Join(parts, ", ")
}
