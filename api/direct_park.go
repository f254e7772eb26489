package api

import (
	"context"
	"errors"
	"net/http"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/fanout"
)

// A taken-over stream that parks with the hub gives its goroutine up: the
// handler returns, and net/http's goroutine of the connection ends with
// its buffers, so an idle follower costs its connection's reader and its
// state, not a goroutine's stack. Whatever ends the park starts a goroutine
// that takes the stream back (takenFollow.wake):
//
//   - the hub handing the follower back (fanout.NewDirect's onWake: frames it
//     could not write whole, a failed write, the turn's end or move);
//   - the heartbeat, due a keep-alive;
//   - the client leaving (the connection's reader cancels ctx);
//   - the server closing its streams.
//
// One goroutine at a time owns the stream: the one that parked it until it
// let go, then the one a wake-up started (state).

// errLetGo ends followFrames when the stream parked and its goroutine let
// go: a wake-up takes it on.
var errLetGo = errors.New("parked")

// The states of a takenFollow.
const (
	followRunning int32 = iota // a goroutine owns the stream
	followParked               // parked with the hub, no goroutine
	followWoken                // woken while its goroutine was parking it
)

// takenFollow is a taken-over stream following its turn.
type takenFollow struct {
	s      *Server
	ctx    context.Context // ends when the client leaves
	cancel context.CancelFunc
	ts     *takenStream
	t      toolmark.Turn
	d      *fanout.Direct // nil when the stream cannot park
	leave  func()         // the hub's count of the turn's followers
	cursor int64          // the seq of the last frame written; the owner's

	state atomic.Int32  // followRunning, followParked or followWoken
	beat  atomic.Bool   // the heartbeat woke it: a keep-alive is due
	stops []func() bool // disarm the park's wake-ups (resume)
	// inHandler is true while the request's handler runs the stream: once
	// it lets go, the stream writes the request's log line at its end.
	inHandler bool
}

// streamTaken writes the events of t after the cursor to a taken-over
// connection; see stream. It owns ts and cancel from here on, and may
// return while the stream goes on (parked).
func (s *Server) streamTaken(ctx context.Context, cancel context.CancelFunc, ts *takenStream, h http.Header, t toolmark.Turn, after int64) {
	s.cfg.Metrics.StreamOpened()
	f := &takenFollow{s: s, ctx: ctx, cancel: cancel, ts: ts, t: t, cursor: after, leave: s.cfg.Runner.Hub().Join(t.ID)}
	if err := ts.writeHead(h, streamPreamble); err != nil {
		f.done()
		return
	}
	if ts.raw != nil {
		f.d = fanout.NewDirect(ts, f.wake)
	}
	f.inHandler = true
	defer func() {
		// The handler's goroutine panics only while it owns the stream:
		// release it, and let recoverPanics log the panic.
		if p := recover(); p != nil {
			f.done()
			panic(p)
		}
	}()
	f.follow()
}

// follow follows the turn from f.cursor until the stream ends, or until it
// parks and its goroutine lets go, which it reports.
func (f *takenFollow) follow() (letGo bool) {
	var park func(int64) (int64, bool, error)
	if f.d != nil {
		park = f.park
	}
	err := f.s.followFrames(f.ctx, f.t, f.cursor, f.ts.Frames, func() error { return f.ts.Text(keepAlive) }, park)
	if errors.Is(err, errLetGo) {
		return true
	}
	f.finish(err)
	return false
}

// finish ends the stream after err (nil: the turn's end): the hint to
// reconnect when the server closes its streams, the body's end, done.
func (f *takenFollow) finish(err error) {
	if errors.Is(err, errStreamClosed) {
		_ = f.ts.Text(closingHint)
	} else if err != nil && f.ctx.Err() == nil {
		f.s.log.Debug("event stream ended", "turn", f.t.ID, "err", err)
	}
	f.ts.end()
	f.done()
}

// park parks the follower with the hub at the cursor (followFrames' park).
// Parked, the goroutine lets go (errLetGo), unless a wake-up came while it
// parked: it then takes the stream back itself.
func (f *takenFollow) park(cursor int64) (int64, bool, error) {
	f.cursor = cursor
	// The hub's writes do not wait, and one past a deadline would fail:
	// the deadline goes while parked.
	_ = f.ts.conn.SetWriteDeadline(time.Time{})
	if !f.s.cfg.Runner.Hub().Park(f.t.ID, f.d, cursor) {
		return cursor, false, nil
	}
	hb := time.AfterFunc(f.s.cfg.Heartbeat, func() {
		f.beat.Store(true)
		f.wake()
	})
	f.stops = append(f.stops[:0], hb.Stop, context.AfterFunc(f.ctx, f.wake), context.AfterFunc(f.s.closingCtx, f.wake))
	// Until the state says parked, no other goroutine runs the stream.
	handler, l := f.inHandler, f.ts.log
	f.inHandler = false
	if handler && l != nil {
		l.detached.Store(true)
	}
	if f.state.CompareAndSwap(followRunning, followParked) {
		return cursor, true, errLetGo
	}
	// Woken meanwhile: this goroutine goes on.
	f.inHandler = handler
	if handler && l != nil {
		l.detached.Store(false)
	}
	f.state.Store(followRunning)
	return f.resume()
}

// wake ends a park: it starts a goroutine that takes the stream back, or,
// when the stream's goroutine is still parking it, tells that goroutine.
// The hub calls it under its lock: it neither blocks nor calls the hub.
func (f *takenFollow) wake() {
	for {
		switch f.state.Load() {
		case followParked:
			if f.state.CompareAndSwap(followParked, followRunning) {
				go f.resumed()
				return
			}
		case followRunning:
			if f.state.CompareAndSwap(followRunning, followWoken) {
				return
			}
		default:
			return
		}
	}
}

// resumed is the goroutine a wake-up starts: it takes the stream back and
// follows on.
func (f *takenFollow) resumed() {
	defer func() {
		if p := recover(); p != nil {
			f.s.log.Error("event stream panicked", "turn", f.t.ID, "panic", p, "stack", string(debug.Stack()))
			f.done()
		}
	}()
	if _, _, err := f.resume(); err != nil {
		f.finish(err)
		return
	}
	f.follow()
}

// resume takes the stream back from the hub: it disarms the park's
// wake-ups, and writes what a write of the hub's left and the keep-alive
// the heartbeat asked for. It returns the cursor the hub wrote up to.
func (f *takenFollow) resume() (int64, bool, error) {
	for _, stop := range f.stops {
		stop()
	}
	f.stops = f.stops[:0]
	cursor, werr := f.s.cfg.Runner.Hub().Unpark(f.d)
	f.cursor = cursor
	switch {
	case werr != nil:
		return cursor, true, werr
	case f.ctx.Err() != nil:
		return cursor, true, f.ctx.Err()
	case f.s.closingCtx.Err() != nil:
		return cursor, true, errStreamClosed
	}
	if err := f.ts.flushRest(); err != nil {
		return cursor, true, err
	}
	if f.beat.Swap(false) {
		// A parked follower's turn runs here: no notification to poll
		// for, unlike followFrames' idle.
		if err := f.ts.Text(keepAlive); err != nil {
			return cursor, true, err
		}
	}
	return cursor, true, nil
}

// done releases the stream once it ended: the connection, the hub's count,
// the metrics, and the request's log line when the handler had returned.
func (f *takenFollow) done() {
	f.leave()
	f.cancel()
	f.s.release(f.ts)
	f.s.cfg.Metrics.StreamClosed()
	if l := f.ts.log; l != nil && l.detached.Load() {
		l.line(l.status, l.bytes)
	}
}
