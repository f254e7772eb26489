package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolmark/toolmark"
)

// defaultRetry is the reconnection delay until the server sends its own.
const defaultRetry = time.Second

// errGap reports an event whose seq is past the next expected one.
var errGap = errors.New("gap in the event sequence")

// callbackError wraps an error returned by Follow's callback so that it is
// told apart from the stream's own errors.
type callbackError struct{ err error }

func (e *callbackError) Error() string { return e.err.Error() }
func (e *callbackError) Unwrap() error { return e.err }

// Follow follows the event stream of a turn from the event after seq after
// (0: from the start) and calls fn with each event in order, exactly once.
//
// When the connection drops (a network error, or the stream ending before
// the turn's terminal event), Follow reconnects with Last-Event-ID set to
// the seq of the last event it delivered, waiting the server's retry delay,
// doubled after each reconnection that delivered nothing, up to a limit (see
// WithRetries, WithMaxBackoff, WithIdleTimeout). Events the server sends
// again are skipped; an event past the next expected seq makes it
// reconnect, so fn never sees a duplicate or a gap. A snapshot event
// (when the server no longer holds the cursor) is delivered and replaces the
// cursor by the snapshot's seq: fn must then replace its state by the
// snapshot's.
//
// Follow returns nil after fn has returned for the terminal event
// (turn_completed, turn_failed, turn_cancelled), or for a snapshot of a
// finished turn when the server sends nothing after it. It returns fn's
// error as soon as fn fails, ctx's error when ctx ends, an *APIError when the
// server refuses the stream with a 4xx status, and the last error when the
// retries are used up.
//
// Ending ctx stops following, not the turn: the turn goes on on the server,
// and a later Follow from the last seq delivered picks it up. With
// CancelTurnOnStop, Follow asks the server to cancel the turn when it stops
// early because ctx ended or fn failed.
func (c *Client) Follow(ctx context.Context, turnID string, after int64, fn func(toolmark.Event) error, opts ...FollowOption) error {
	var cfg followConfig
	for _, o := range opts {
		o(&cfg)
	}
	f := &follower{c: c, turnID: turnID, last: after, fn: fn, retry: defaultRetry, cfg: cfg}
	err := f.run(ctx)
	if err != nil && cfg.cancelOnStop && !f.ended && (ctx.Err() != nil || errors.As(err, new(*callbackError))) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
		_, _ = c.CancelTurn(cctx, turnID)
		cancel()
	}
	if cbErr := (*callbackError)(nil); errors.As(err, &cbErr) {
		return cbErr.err
	}
	return err
}

// cancelTimeout bounds the cancel request CancelTurnOnStop sends.
const cancelTimeout = 10 * time.Second

// FollowOption configures one Follow, Events or Stream call.
type FollowOption func(*followConfig)

type followConfig struct {
	onConn       func(ConnState)
	cancelOnStop bool
}

// ConnState tells how a Follow's connection stands; see OnConnState.
type ConnState struct {
	// Connected is true when a connection has just been established and
	// streams; false while Follow waits to reconnect.
	Connected bool
	Attempt   int           // the reconnection about to be made (1-based); 0 when connected
	Wait      time.Duration // the pause before that reconnection
	Err       error         // why the previous connection ended
}

// OnConnState makes Follow call fn each time a connection is established
// and each time it waits to reconnect, so a user interface can show a
// "reconnecting…" state. fn runs on Follow's goroutine and must not block.
func OnConnState(fn func(ConnState)) FollowOption {
	return func(c *followConfig) { c.onConn = fn }
}

// CancelTurnOnStop makes Follow cancel the turn on the server (with
// CancelTurn, on a context of its own) when it stops before the turn's end
// because ctx ended or the callback failed — or, for Events, because the
// caller stopped iterating. Without it, the turn goes on when its follower
// goes away, as it does when a browser tab closes.
func CancelTurnOnStop() FollowOption {
	return func(c *followConfig) { c.cancelOnStop = true }
}

// run makes connections until the turn ends or an error ends Follow.
func (f *follower) run(ctx context.Context) error {
	c := f.c
	failures := 0
	for {
		progressed, err := f.once(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.As(err, new(*callbackError)) {
			return err
		}
		var apiErr *APIError
		if errors.As(err, &apiErr) && apiErr.Status < 500 && apiErr.Status != http.StatusTooManyRequests && apiErr.Status != http.StatusRequestTimeout {
			return err
		}
		if progressed {
			failures = 0
		}
		failures++
		if failures > c.maxRetries {
			return fmt.Errorf("following turn %s: giving up after %d reconnections: %w", f.turnID, c.maxRetries, err)
		}
		wait := f.backoff(failures)
		if f.cfg.onConn != nil {
			f.cfg.onConn(ConnState{Attempt: failures, Wait: wait, Err: err})
		}
		if err := sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// follower is the state of one Follow call across its connections.
type follower struct {
	c      *Client
	turnID string
	fn     func(toolmark.Event) error
	cfg    followConfig
	ended  bool          // the turn's end was delivered
	last   int64         // seq of the last delivered event (or snapshot)
	retry  time.Duration // the server's reconnection delay
	// finalSnapshot is set when the last thing delivered was a snapshot of a
	// finished turn: a stream ending right after it ends the turn too.
	finalSnapshot bool
}

// backoff returns the wait before reconnection number n (1-based): the
// server's retry delay doubled for each failure after the first, capped,
// with up to 20% random jitter.
func (f *follower) backoff(n int) time.Duration {
	d := f.retry
	for i := 1; i < n && d < f.c.maxBackoff; i++ {
		d *= 2
	}
	d = min(d, f.c.maxBackoff)
	if d > 0 {
		d += time.Duration(rand.Int64N(int64(d)/5 + 1))
	}
	return d
}

// once makes one connection and delivers its events. It returns nil when
// the turn is over, and reports whether it delivered at least one event.
func (f *follower) once(ctx context.Context) (progressed bool, err error) {
	var lastID string
	if f.last > 0 {
		lastID = strconv.FormatInt(f.last, 10)
	}
	conn, err := f.c.openStream(ctx, "/api/turns/"+url.PathEscape(f.turnID)+"/events", "events", lastID)
	defer conn.close()
	if err != nil {
		return false, err
	}
	if f.cfg.onConn != nil {
		f.cfg.onConn(ConnState{Connected: true})
	}
	for {
		fr, err := conn.rd.Next()
		if err != nil {
			if f.finalSnapshot && (err == io.EOF || err == io.ErrUnexpectedEOF) {
				f.ended = true
				return progressed, nil
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // the stream ended before the terminal event
			}
			return progressed, conn.named(fmt.Errorf("reading events: %w", err))
		}
		if fr.Retry > 0 {
			f.retry = time.Duration(fr.Retry) * time.Millisecond
		}
		if fr.Data == "" {
			continue
		}
		var ev toolmark.Event
		if err := json.Unmarshal([]byte(fr.Data), &ev); err != nil {
			return progressed, fmt.Errorf("decoding event %q: %w", fr.ID, err)
		}
		if ev.Type == "" {
			ev.Type = toolmark.EventType(fr.Event)
		}
		if ev.Type == toolmark.EventSnapshot {
			var sd toolmark.SnapshotData
			if err := json.Unmarshal(ev.Data, &sd); err != nil {
				return progressed, fmt.Errorf("decoding snapshot: %w", err)
			}
			if err := f.fn(ev); err != nil {
				return progressed, &callbackError{err}
			}
			progressed = true
			f.last = sd.Seq
			if f.last == 0 {
				f.last = ev.Seq
			}
			f.finalSnapshot = sd.Status.Final()
			continue
		}
		if ev.Seq <= f.last {
			continue // already delivered
		}
		if ev.Seq != f.last+1 {
			return progressed, fmt.Errorf("%w: got seq %d after %d", errGap, ev.Seq, f.last)
		}
		if err := f.fn(ev); err != nil {
			return progressed, &callbackError{err}
		}
		progressed = true
		f.last = ev.Seq
		f.finalSnapshot = false
		if ev.Type.Terminal() {
			f.ended = true
			return progressed, nil
		}
	}
}

// streamConn is one connection to an event stream (a turn's events or a
// conversation's watch), cancelled when it sends nothing for the client's
// idle timeout.
type streamConn struct {
	ctx    context.Context // the caller's
	cancel context.CancelFunc
	idle   idleTimer
	d      time.Duration
	body   io.Closer
	rd     *Reader
}

// openStream opens the event stream at path (what names it in errors),
// from Last-Event-ID lastID when set. The connection is always returned,
// to be closed, also with an error: a refused connection, an error
// answer (decodeError's) or an answer that is not an event stream.
func (c *Client) openStream(ctx context.Context, path, what, lastID string) (*streamConn, error) {
	conn := &streamConn{ctx: ctx, d: c.idleTimeout}
	actx, cancel := context.WithCancel(ctx)
	conn.cancel = cancel
	req, err := c.newRequest(actx, http.MethodGet, path, nil)
	if err != nil {
		return conn, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	conn.idle.start(c.idleTimeout, cancel)
	resp, err := c.hc.Do(req)
	if err != nil {
		return conn, conn.named(fmt.Errorf("GET %s: %w", path, err))
	}
	conn.body = resp.Body
	if resp.StatusCode != http.StatusOK {
		return conn, decodeError(resp)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return conn, &APIError{Status: resp.StatusCode, Code: toolmark.EINTERNAL, Message: what + " answer has content type " + ct}
	}
	conn.rd = NewReader(&idleReader{r: resp.Body, t: &conn.idle})
	return conn, nil
}

// close ends the connection.
func (s *streamConn) close() {
	s.idle.stop()
	if s.body != nil {
		s.body.Close()
	}
	s.cancel()
}

// named names an idle timeout as such: the request's context was
// cancelled by the idle timer, not by the caller.
func (s *streamConn) named(err error) error {
	if s.ctx.Err() == nil && s.idle.fired() {
		return fmt.Errorf("no data for %v: %w", s.d, err)
	}
	return err
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// idleTimer cancels a connection that receives nothing for a while.
type idleTimer struct {
	mu      sync.Mutex
	t       *time.Timer
	d       time.Duration
	didFire bool
}

func (it *idleTimer) start(d time.Duration, cancel context.CancelFunc) {
	if d <= 0 {
		return
	}
	it.d = d
	it.t = time.AfterFunc(d, func() {
		it.mu.Lock()
		it.didFire = true
		it.mu.Unlock()
		cancel()
	})
}

func (it *idleTimer) reset() {
	if it.t != nil {
		it.t.Reset(it.d)
	}
}

func (it *idleTimer) stop() {
	if it.t != nil {
		it.t.Stop()
	}
}

func (it *idleTimer) fired() bool {
	it.mu.Lock()
	defer it.mu.Unlock()
	return it.didFire
}

// idleReader resets its timer whenever bytes arrive.
type idleReader struct {
	r io.Reader
	t *idleTimer
}

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.t.reset()
	}
	return n, err
}
