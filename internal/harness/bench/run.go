package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/toolmark/toolmark"
)

// Load is the shape of one load run.
type Load struct {
	// Turns is the number of turns in all (at least 1).
	Turns int
	// Concurrency is how many turns are in flight at once; 0 (or Turns or
	// more) starts them all at once. Poisson arrivals ignore it.
	Concurrency int
	// Followers is the number of streams that follow each turn (default 1).
	Followers int
	// Arrivals is how turns start: ArrivalsBurst (the default) releases
	// them Concurrency at a time, closed loop; ArrivalsPoisson starts them
	// at random instants at Rate per second whatever the server does (open
	// loop), so the number in flight is steady and a stall cannot hold
	// back the load that would reveal it.
	Arrivals string
	// Rate is the mean number of turns started per second with Poisson
	// arrivals.
	Rate float64
	// Warmup, with Poisson arrivals, leaves out of the latency figures the
	// turns meant to start in the run's first Warmup, while the number of
	// turns in flight still rises (they must still complete).
	Warmup time.Duration
	// Render makes the followers read rendered HTML (?render=html) with
	// compression accepted, as the web page does, instead of the events:
	// the report then counts the bytes on the wire and the render frames.
	Render bool
	// Protocols adds, per turn, one stream of each protocol named
	// (ProtocolPage, ProtocolAISDK) beside the Followers event streams.
	Protocols []string
}

// The arrival processes of a Load.
const (
	ArrivalsBurst   = "burst"
	ArrivalsPoisson = "poisson"
)

func (l Load) check() (Load, error) {
	if l.Turns < 1 {
		return l, errors.New("a run needs at least 1 turn")
	}
	if l.Followers == 0 {
		l.Followers = 1
	}
	if l.Followers < 0 || l.Concurrency < 0 || l.Warmup < 0 {
		return l, errors.New("followers, concurrency and warm-up cannot be negative")
	}
	if err := checkProtocols(l.Protocols); err != nil {
		return l, err
	}
	switch l.Arrivals {
	case "", ArrivalsBurst:
		l.Arrivals = ArrivalsBurst
		if l.Concurrency == 0 || l.Concurrency > l.Turns {
			l.Concurrency = l.Turns
		}
	case ArrivalsPoisson:
		if !(l.Rate > 0) {
			return l, errors.New("poisson arrivals need a rate above 0 turns per second")
		}
		l.Concurrency = 0
	default:
		return l, fmt.Errorf("unknown arrivals %q: burst or poisson", l.Arrivals)
	}
	return l, nil
}

// Run runs one load and reports it. Against a server the bench starts, the
// server is fresh, and stopped at the end.
func (b *Bench) Run(ctx context.Context, l Load) (*Report, error) {
	l, err := l.check()
	if err != nil {
		return nil, err
	}
	t, err := b.startTarget(ctx, b.cfg.Demo)
	if err != nil {
		return nil, err
	}
	defer t.stop()
	return b.run(ctx, t, l)
}

// turnResult is what the bench saw of one turn.
type turnResult struct {
	id  string
	err error // the turn could not be started
	// t0 is when the turn was meant to start: the POST's sending time, or
	// with Poisson arrivals its scheduled instant, so that a bench that
	// falls behind its schedule counts the delay against the server
	// instead of hiding it (no coordinated omission).
	t0      time.Time
	late    time.Duration // how long after t0 the POST was sent
	warmup  bool          // meant to start during the warm-up: not in the latency figures
	streams []streamResult
	// protocols holds why each protocol follower (Load.Protocols) failed,
	// nil where it ended as its protocol says.
	protocols []error
}

// costs is a sample of the server's and the bench's own resources.
type costs struct {
	server *proc // a started server only
	self   selfUsage
}

func (b *Bench) sampleCosts(t *target) (costs, error) {
	var c costs
	if t.server != nil {
		p, err := t.usage()
		if err != nil {
			return c, err
		}
		c.server = &p
	}
	var err error
	c.self, err = readSelf()
	return c, err
}

func (b *Bench) run(ctx context.Context, t *target, l Load) (*Report, error) {
	s := b.session(t)
	defer s.close()
	info, err := s.api.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("reaching the server: %w", err)
	}
	rep := &Report{
		Server: t.url, StartedServer: t.server != nil, Model: info.Model, Question: b.cfg.Question,
		Turns: l.Turns, Concurrency: l.Concurrency, Followers: l.Followers,
		Arrivals: l.Arrivals, Rate: l.Rate, Warmup: Duration(l.Warmup), Render: l.Render, Protocols: l.Protocols,
	}
	if t.server != nil {
		d := b.cfg.Demo
		rep.Demo = &d
		rep.History = b.cfg.History
		rep.Pooler = b.cfg.Pooler
	}
	rep.Replicas = 1 + len(t.peerURLs)
	b.out.say("creating %d conversations", l.Turns+1)
	convs, err := b.conversations(ctx, s, l.Turns+1)
	if err != nil {
		return nil, err
	}

	b.out.say("running one turn alone")
	ref := b.turn(ctx, s, convs[0], Load{Followers: 1, Render: l.Render}, time.Now())
	if err := ref.failure(); err != nil {
		return nil, fmt.Errorf("the turn run alone failed: %w", err)
	}
	rep.UnloadedTurn = Duration(ref.streams[0].end.Sub(ref.t0))
	st, err := s.api.GetTurn(ctx, ref.id)
	if err != nil {
		return nil, fmt.Errorf("reading the answer of the turn run alone: %w", err)
	}
	rep.AnswerBytes = len(st.Content)
	rep.EventsPerTurn = ref.streams[0].events
	b.out.say("the turn alone took %s; its answer is %s", fmtDur(time.Duration(rep.UnloadedTurn)), fmtBytes(float64(rep.AnswerBytes)))
	if err := b.settle(ctx); err != nil {
		return nil, err
	}

	before, err := b.sampleCosts(t)
	if err != nil {
		return nil, err
	}
	stagesBefore, stagesErr := readStages(ctx, s.hc, t.url)
	if len(t.peerURLs) > 0 {
		stagesErr = errors.New("they are one replica's of several")
	}
	var pgBefore *pgSample
	if b.stats != nil {
		ps, err := b.stats.sample(ctx)
		if err != nil {
			return nil, err
		}
		pgBefore = &ps
	}
	results, elapsed, steady := b.load(ctx, s, convs[1:], l)
	after, err := b.sampleCosts(t)
	if err != nil {
		return nil, err
	}
	if stagesErr == nil {
		var stagesAfter stagesReading
		if stagesAfter, stagesErr = readStages(ctx, s.hc, t.url); stagesErr == nil {
			rep.Stages, stagesErr = stagesSince(stagesBefore, stagesAfter)
		}
	}
	if stagesErr != nil {
		b.out.say("the server's commit and scheduling figures are left out: %v", stagesErr)
	}
	// Connections the transport dialled but never used look new to the
	// server, whose shutdown waits 5 s for them: close them now.
	s.close()
	rep.Elapsed = Duration(elapsed)
	rep.add(results, steady)
	if err := ctx.Err(); err != nil {
		return rep, fmt.Errorf("the run was cut short: %w", err)
	}
	if err := b.finishCosts(ctx, t, rep, before, after, pgBefore); err != nil {
		return rep, err
	}
	return rep, nil
}

// finishCosts fills the server, PostgreSQL and client costs of a run. It
// stops a started server first, so that PostgreSQL publishes the
// transaction counts of its connections, and then reads transactions,
// transaction ids and WAL from one sample, the one the run's PostgreSQL
// figures end at.
func (b *Bench) finishCosts(ctx context.Context, t *target, rep *Report, before, after costs, pgBefore *pgSample) error {
	turns := float64(rep.Turns)
	if before.server != nil {
		cpu := after.server.CPU - before.server.CPU
		rep.ServerCost = &ServerCost{
			CPU: Duration(cpu), CPUPerTurn: Duration(float64(cpu) / turns),
			Cores:   ratio(float64(cpu), float64(rep.Elapsed)),
			Kernel:  ratio(float64(after.server.SysCPU-before.server.SysCPU), float64(cpu)),
			PeakRSS: after.server.PeakRSS, RSS: after.server.RSS,
		}
	}
	cpu := after.self.CPU - before.self.CPU
	rep.ClientCost = ClientCost{CPU: Duration(cpu), Cores: ratio(float64(cpu), float64(rep.Elapsed)), PeakRSS: after.self.PeakRSS, Procs: runtime.GOMAXPROCS(0)}
	if pgBefore == nil {
		return nil
	}
	if t.server != nil {
		if err := t.stop(); err != nil {
			return err
		}
	} else if err := b.settle(ctx); err != nil {
		return err
	}
	final, err := b.stableSample(ctx)
	if err != nil {
		return err
	}
	rep.Postgres = newPGCost(final.since(*pgBefore), rep.Turns, rep.AnswerBytes, b.dbURL)
	return nil
}

// stableSample reads PostgreSQL's statistics until two readings 300 ms
// apart differ in transactions by no more than a reading's own (backends
// of a stopped server publish theirs as they exit), for at most 5 s, and
// returns the last.
func (b *Bench) stableSample(ctx context.Context) (pgSample, error) {
	prev := int64(-1)
	deadline := time.Now().Add(5 * time.Second)
	for {
		s, err := b.stats.sample(ctx)
		if err != nil {
			return pgSample{}, err
		}
		if (prev >= 0 && s.Xacts-prev <= ownXacts) || time.Now().After(deadline) {
			return s, nil
		}
		prev = s.Xacts
		select {
		case <-ctx.Done():
			return pgSample{}, ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// conversations creates n conversations, a few at a time.
func (b *Bench) conversations(ctx context.Context, s *session, n int) ([]string, error) {
	ids := make([]string, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			c, err := s.api.CreateConversation(ctx, fmt.Sprintf("bench %d", i))
			ids[i], errs[i] = c.ID, err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("creating conversations: %w", err)
	}
	return ids, nil
}

// load runs one turn in each conversation, as l's arrival process says,
// and returns the results, the time from the first start to the end of
// the last turn and, with Poisson arrivals, the steady window: from the
// end of the warm-up to the last arrival.
func (b *Bench) load(ctx context.Context, s *session, convs []string, l Load) ([]turnResult, time.Duration, window) {
	results := make([]turnResult, len(convs))
	p := b.out.start(l.describe(), l.Turns, "turns")
	s.streams.onEvent = p.event
	var wg sync.WaitGroup
	run := func(i int, at time.Time, began time.Time) {
		defer wg.Done()
		results[i] = b.turn(ctx, s.replica(i), convs[i], l, at)
		results[i].warmup = at.Sub(began) < l.Warmup
		p.turnDone(results[i].failure() == nil)
	}
	began := time.Now()
	var steady window
	if l.Arrivals == ArrivalsPoisson {
		schedule := poissonSchedule(began, l.Rate, len(convs), rand.New(rand.NewPCG(uint64(began.UnixNano()), 1)))
		if len(schedule) > 0 {
			steady = window{from: began.Add(l.Warmup), to: schedule[len(schedule)-1]}
			s.streams.steadyEnd = steady.to
		}
		for i, at := range schedule {
			if d := time.Until(at); d > 0 {
				select {
				case <-ctx.Done():
				case <-time.After(d):
				}
			}
			wg.Add(1)
			go run(i, at, began)
		}
	} else {
		start := make(chan struct{})
		sem := make(chan struct{}, l.Concurrency)
		for i := range convs {
			wg.Add(1)
			go func() {
				<-start
				sem <- struct{}{}
				defer func() { <-sem }()
				run(i, time.Now(), began)
			}()
		}
		close(start)
	}
	wg.Wait()
	elapsed := time.Since(began)
	s.streams.onEvent, s.streams.steadyEnd = nil, time.Time{}
	p.finish()
	return results, elapsed, steady
}

// window is a stretch of a run; zero when the run has none.
type window struct{ from, to time.Time }

// overlap is how much of the stretch from a to b lies in w.
func (w window) overlap(a, b time.Time) time.Duration {
	if a.Before(w.from) {
		a = w.from
	}
	if b.After(w.to) {
		b = w.to
	}
	return max(b.Sub(a), 0)
}

// poissonSchedule returns n instants from start on whose gaps are drawn
// from the exponential distribution of mean 1/rate: the arrivals of a
// Poisson process of rate per second.
func poissonSchedule(start time.Time, rate float64, n int, rng *rand.Rand) []time.Time {
	out := make([]time.Time, n)
	at := start
	for i := range out {
		at = at.Add(time.Duration(rng.ExpFloat64() / rate * float64(time.Second)))
		out[i] = at
	}
	return out
}

// describe names the load for the progress line and the report.
func (l Load) describe() string {
	how := atOnce(l.Concurrency, l.Turns)
	if l.Arrivals == ArrivalsPoisson {
		how = fmt.Sprintf("poisson arrivals at %.3g/s", l.Rate)
	}
	kind := "follower"
	if l.Render {
		kind = "rendering follower"
	}
	each := plural(l.Followers, kind)
	if len(l.Protocols) > 0 {
		each += " and one " + strings.Join(l.Protocols, ", one ") + " follower"
	}
	return fmt.Sprintf("%d turns, %s, %s each", l.Turns, how, each)
}

// turn starts a turn meant to start at t0 and follows it with l's
// streams (l.Followers event streams, rendering ones with l.Render, and
// one of each of l.Protocols), opened as soon as the POST returns.
func (b *Bench) turn(ctx context.Context, s *session, conv string, l Load, t0 time.Time) turnResult {
	r := turnResult{t0: t0, late: max(time.Since(t0), 0)}
	ti, err := s.api.PostTurn(ctx, conv, b.cfg.Question, "")
	if err != nil {
		r.err = fmt.Errorf("starting a turn: %w", err)
		return r
	}
	r.id = ti.Turn.ID
	r.streams = make([]streamResult, l.Followers)
	r.protocols = make([]error, len(l.Protocols))
	var wg sync.WaitGroup
	for f := 1; f < l.Followers; f++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.streams[f] = s.follower(f).streams.follow(ctx, r.id, nil, l.Render)
		}()
	}
	for i, p := range l.Protocols {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.protocols[i] = s.follower(l.Followers+i).streams.followProtocol(ctx, p, conv, r.id)
		}()
	}
	r.streams[0] = s.follower(0).streams.follow(ctx, r.id, nil, l.Render)
	wg.Wait()
	return r
}

// failure returns why a turn did not complete as seen by its first
// follower, or nil.
func (r *turnResult) failure() error {
	switch {
	case r.err != nil:
		return r.err
	case len(r.streams) == 0:
		return errors.New("no stream")
	case r.streams[0].terminal == toolmark.EventTurnCompleted:
		return errors.Join(r.protocols...)
	case r.streams[0].terminal != "":
		msg := string(r.streams[0].terminal)
		if r.streams[0].endError != "" {
			msg += ": " + r.streams[0].endError
		}
		return errors.New(msg)
	case r.streams[0].err != nil:
		return r.streams[0].err
	}
	return errors.New("the turn did not end")
}

// endData decodes a terminal event's error text.
func endData(data string) string {
	var e struct {
		Data toolmark.TurnEndData `json:"data"`
	}
	if json.Unmarshal([]byte(data), &e) != nil {
		return ""
	}
	return e.Data.Error
}
