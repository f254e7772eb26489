package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// IdleLoad is the shape of a memory-per-idle-follower measurement.
type IdleLoad struct {
	// Streams is the number of idle streams to open (default 10 000).
	Streams int
	// Turns is the number of turns they follow, spread evenly (default 10).
	Turns int
	// Render opens the streams as the web page does (?render=html, gzip
	// accepted) instead of as event streams.
	Render bool
}

// IdleReport is what an idle-follower measurement found. Sizes are bytes.
type IdleReport struct {
	Server    string   `json:"server"`
	Turns     int      `json:"turns"`
	Streams   int      `json:"streams"`        // asked for
	Render    bool     `json:"render"`         // rendering streams, as the page's
	Frames    int      `json:"renderFrames"`   // render frames the open streams got
	Opened    int      `json:"opened"`         // open and idle when measured
	Failed    int      `json:"failed"`         // could not be opened or broke
	OpenTime  Duration `json:"openMs"`         // opening them all
	RSSBefore int64    `json:"rssBeforeBytes"` // server VmRSS with the turns running and no stream
	RSSAfter  int64    `json:"rssAfterBytes"`  // server VmRSS with the streams open
	PeakRSS   int64    `json:"peakRssBytes"`   // server VmHWM
	PerStream float64  `json:"bytesPerStream"` // (RSSAfter - RSSBefore) / Opened
	// ClientPerStream is the growth of the bench's own peak RSS per
	// stream.
	ClientPerStream float64      `json:"clientBytesPerStream"`
	Errors          []ErrorCount `json:"errors,omitempty"`
}

// idleSettle is how long the bench waits, streams open, before reading the
// server's memory, so that the last streams' set-up is done.
const idleSettle = 2 * time.Second

// Idle measures the server's memory per idle follower: it starts a server
// whose demo model pauses a day before each chunk, starts l.Turns turns
// (which then stay alive), opens l.Streams streams on them, a limited
// number being opened at once, waits until each has received the events so
// far, and reports the server's RSS growth divided by the streams open. It
// needs a server the bench starts.
func (b *Bench) Idle(ctx context.Context, l IdleLoad) (*IdleReport, error) {
	if b.cfg.Server != "" {
		return nil, errors.New("the idle-follower measurement reads the server's memory: it needs a server the bench starts")
	}
	if l.Streams <= 0 {
		l.Streams = 10_000
	}
	if l.Turns <= 0 {
		l.Turns = 10
	}
	if err := checkFiles(l.Streams); err != nil {
		return nil, err
	}
	demo := b.cfg.Demo
	demo.Delay = 24 * time.Hour
	t, err := b.startTarget(ctx, demo)
	if err != nil {
		return nil, err
	}
	defer t.stop()
	s := b.session(t)
	defer s.close()

	turns, err := b.startIdleTurns(ctx, s, l.Turns)
	if err != nil {
		return nil, err
	}
	defer cancelTurns(ctx, s, turns) // let the server stop without waiting for the turns
	if err := waitRunning(ctx, s, turns); err != nil {
		return nil, err
	}
	time.Sleep(time.Second)
	before, err := b.sampleCosts(t)
	if err != nil {
		return nil, err
	}

	rep := &IdleReport{Server: t.url, Turns: l.Turns, Streams: l.Streams, Render: l.Render, RSSBefore: before.server.RSS}
	after, errs, err := b.idleStreams(ctx, s, t, turns, rep)
	if err != nil {
		return nil, err
	}
	rep.Opened = l.Streams - rep.Failed
	rep.RSSAfter, rep.PeakRSS = after.server.RSS, after.server.PeakRSS
	if rep.Opened > 0 {
		rep.PerStream = float64(rep.RSSAfter-rep.RSSBefore) / float64(rep.Opened)
		rep.ClientPerStream = float64(after.self.PeakRSS-before.self.PeakRSS) / float64(rep.Opened)
	}
	for msg, n := range errs {
		rep.Errors = append(rep.Errors, ErrorCount{msg, n})
	}
	return rep, nil
}

// startIdleTurns starts a turn in each of n new conversations and returns
// their ids.
func (b *Bench) startIdleTurns(ctx context.Context, s *session, n int) ([]string, error) {
	convs, err := b.conversations(ctx, s, n)
	if err != nil {
		return nil, err
	}
	turns := make([]string, n)
	for i, c := range convs {
		ti, err := s.api.PostTurn(ctx, c, b.cfg.Question, "")
		if err != nil {
			return nil, fmt.Errorf("starting a turn: %w", err)
		}
		turns[i] = ti.Turn.ID
	}
	return turns, nil
}

// cancelTurns cancels turns, within 30 s even when ctx is done.
func cancelTurns(ctx context.Context, s *session, turns []string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for _, id := range turns {
		_, _ = s.api.CancelTurn(cctx, id)
	}
}

// idleStreams opens rep.Streams streams on turns, waits idleSettle, samples
// the costs with them open, counts in rep the streams that ended before
// (failed, by message) and closes the others. It sets rep.OpenTime and
// rep.Failed.
func (b *Bench) idleStreams(ctx context.Context, s *session, t *target, turns []string, rep *IdleReport) (costs, map[string]int, error) {
	sctx, closeStreams := context.WithCancel(ctx)
	defer closeStreams()
	p := b.out.start(fmt.Sprintf("opening %d idle streams on %d turns", rep.Streams, rep.Turns), rep.Streams, "streams")
	s.streams.onEvent = p.event
	results := make(chan streamResult, rep.Streams)
	var wg sync.WaitGroup
	began := time.Now()
	openIdleStreams(sctx, s, turns, rep.Streams, rep.Render, p, results, &wg)
	rep.OpenTime = Duration(time.Since(began))
	p.finish()
	b.out.say("%d streams opened in %s; waiting %v", rep.Streams, fmtDur(time.Duration(rep.OpenTime)), idleSettle)
	time.Sleep(idleSettle)
	after, err := b.sampleCosts(t)
	if err != nil {
		return after, nil, err
	}
	errs := endedStreams(results, rep)
	closeStreams()
	wg.Wait()
	for range len(results) { // the streams closed here
		rep.Frames += (<-results).frames
	}
	return after, errs, nil
}

// openIdleStreams opens n streams on turns (in turn), rendering ones with
// render, at most 128 being opened at once, and returns once the last are
// open. Each stream's result goes to results when it ends; wg is done when
// they all have.
func openIdleStreams(sctx context.Context, s *session, turns []string, n int, render bool, p *counter, results chan<- streamResult, wg *sync.WaitGroup) {
	dialing := make(chan struct{}, 128) // streams being opened at once
	for i := range n {
		dialing <- struct{}{}
		ready := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.streams.follow(sctx, turns[i%len(turns)], ready, render)
			if sctx.Err() == nil {
				p.failedIf(true)
			}
			results <- r
		}()
		go func() {
			<-ready
			p.turnDone(true)
			<-dialing
		}()
	}
	for range cap(dialing) { // the last streams are open
		dialing <- struct{}{}
	}
}

// endedStreams counts in rep.Failed the streams that ended before being
// closed by the bench, and returns them by message.
func endedStreams(results <-chan streamResult, rep *IdleReport) map[string]int {
	errs := map[string]int{}
	for done := false; !done; {
		select {
		case r := <-results:
			rep.Failed++
			msg := "the stream ended"
			if r.err != nil {
				msg = toolcallmarkup.OneLine(r.err.Error(), 200)
			}
			errs[msg]++
		default:
			done = true
		}
	}
	return errs
}

// waitRunning waits until every turn runs (it then waits on the model's
// first pause).
func waitRunning(ctx context.Context, s *session, turns []string) error {
	deadline := time.Now().Add(time.Minute)
	for _, id := range turns {
		for {
			st, err := s.api.GetTurn(ctx, id)
			if err != nil {
				return fmt.Errorf("reading a turn: %w", err)
			}
			if st.Turn.Status == toolmark.TurnRunning {
				break
			}
			if st.Turn.Status.Final() {
				return fmt.Errorf("turn %s ended (%s) before the streams were opened", id, st.Turn.Status)
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("turn %s is still %s after a minute", id, st.Turn.Status)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

// checkFiles checks that the bench may open n more connections.
func checkFiles(n int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return nil // unknown: let the dials say
	}
	if need := uint64(n) + 256; lim.Cur < need {
		return fmt.Errorf("%d streams need about %d open files, and the limit is %d: raise it (ulimit -n) or open fewer", n, need, lim.Cur)
	}
	return nil
}

// Problems lists what went wrong: streams that failed.
func (r *IdleReport) Problems() []string {
	if r.Failed > 0 {
		return []string{fmt.Sprintf("%d of %d idle streams failed", r.Failed, r.Streams)}
	}
	return nil
}

// WriteText writes the report for a person.
func (r *IdleReport) WriteText(w io.Writer) error {
	kind := "event streams"
	if r.Render {
		kind = "rendering streams (as the page reads them)"
	}
	_, err := fmt.Fprintf(w, "%-13s %d %s on %d turns that stay alive, %s (model pauses a day per chunk)\n"+
		"%-13s %d open, %d failed, opened in %s\n"+
		"%-13s RSS %s before, %s with the streams open (peak %s)\n"+
		"%-13s %s per idle follower (the bench: %s per stream)\n",
		"idle load", r.Streams, kind, r.Turns, r.Server,
		"streams", r.Opened, r.Failed, fmtDur(time.Duration(r.OpenTime)),
		"server", fmtBytes(float64(r.RSSBefore)), fmtBytes(float64(r.RSSAfter)), fmtBytes(float64(r.PeakRSS)),
		"memory", fmtBytes(r.PerStream), fmtBytes(r.ClientPerStream))
	for _, e := range r.Errors {
		fmt.Fprintf(w, "%-13s %d× %s\n", "error", e.Count, e.Message)
	}
	return err
}
