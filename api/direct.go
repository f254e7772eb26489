package api

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/toolmark/toolmark/fanout"
)

// Taken-over streams: an event stream over HTTP/1.1 (not the render
// stream) takes its connection over from net/http (Hijack) and writes the
// response itself: the head, the chunked body and, when the client accepts
// gzip, each chunk compressed on its own, as the compress middleware would.
// Owning the connection lets the stream park with the hub (fanout.Direct)
// once it has caught up: after each commit the hub's writer writes the
// frames of every parked follower without blocking, and no follower's
// goroutine wakes (docs/performance.md measures what that saves). A
// follower whose socket is full, and one woken for its heartbeat, the
// server's shutdown or the turn's end, goes on from its goroutine.
//
// A taken connection is closed when its stream ends ("Connection: close"),
// and net/http no longer tracks it: the server does (StreamsClosed).

// StreamWritesHub and StreamWritesFollower are the values of
// Config.StreamWrites.
const (
	StreamWritesHub      = "hub"      // parked followers are written by the hub after each commit
	StreamWritesFollower = "follower" // every stream is written by its own goroutine
)

// takenStream is an event stream whose connection the server took over.
type takenStream struct {
	conn net.Conn
	raw  syscall.RawConn // nil when the connection has no descriptor: it never parks
	gz   *gzipPieces     // nil when the body is not compressed
	body []byte          // the chunk's body being built
	out  []byte          // the chunk being written
	rest []byte          // what a write of the hub's left: written first, by the stream
	log  *takenLog       // the request log's figures; nil outside logRequests
	// timeout bounds each write of the stream's goroutine (Config.
	// StreamWriteTimeout); the hub's writes do not wait.
	timeout time.Duration
	// broken is the error of a write that failed, or timed out part way
	// through a chunk: nothing more is written, not even the body's end,
	// which would make a cut-off stream look whole.
	broken error
}

// takenLog is what the request log says of a stream that took its
// connection over, as net/http no longer counts for it.
type takenLog struct {
	status int
	bytes  int64 // of the body, as sent
	// detached is set when the handler returned while the stream goes on
	// (parked, direct_park.go): the stream writes the log line, with line,
	// when it ends.
	detached atomic.Bool
	line     func(status int, bytes int64)
}

// write writes b, waiting for the socket up to the timeout.
func (ts *takenStream) write(b []byte) error {
	if ts.broken != nil {
		return ts.broken
	}
	_ = ts.conn.SetWriteDeadline(time.Now().Add(ts.timeout))
	n, err := ts.conn.Write(b)
	ts.counted(n)
	ts.broken = err
	return err
}

func (ts *takenStream) counted(n int) {
	if ts.log != nil {
		ts.log.bytes += int64(n)
	}
}

// take takes the connection of an event stream over, or returns nil when
// the stream stays with net/http: a render stream, HTTP/2, TLS, a client
// that accepts deflate but not gzip, a server that closes its streams, or
// Config.StreamWrites "follower". ctx is cancelled when the client
// closes the connection.
func (s *Server) take(w http.ResponseWriter, r *http.Request) (ts *takenStream, ctx context.Context, cancel context.CancelFunc) {
	if s.cfg.StreamWrites != StreamWritesHub || r.ProtoMajor != 1 || r.ProtoMinor < 1 || r.TLS != nil {
		return nil, nil, nil
	}
	gzip := acceptsEncoding(r, "gzip")
	if !gzip && acceptsEncoding(r, "deflate") {
		return nil, nil, nil
	}
	s.takeMu.Lock()
	if s.takeEnded {
		s.takeMu.Unlock()
		return nil, nil, nil
	}
	s.takeWG.Add(1)
	s.takeMu.Unlock()
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		s.takeWG.Done()
		return nil, nil, nil
	}
	_ = conn.SetDeadline(time.Time{}) // a stream outlives the server's timeouts
	ts = &takenStream{conn: conn, timeout: s.cfg.StreamWriteTimeout}
	if l, ok := r.Context().Value(takenKey).(*takenLog); ok {
		ts.log = l
	}
	if sc, ok := conn.(syscall.Conn); ok {
		ts.raw, _ = sc.SyscallConn()
	}
	if gzip {
		ts.gz = new(gzipPieces)
	}
	s.takeMu.Lock()
	s.taken[ts] = struct{}{}
	s.takeMu.Unlock()
	// net/http no longer reads the connection: a read that fails (the
	// client left, or release closed it) cancels the stream. A client sends
	// nothing more on a stream; what it might is dropped.
	// The stream may outlive its handler (direct_park.go), whose request's
	// context ends with it: its own keeps the request's values.
	ctx, cancel = context.WithCancel(context.WithoutCancel(r.Context()))
	go func() {
		defer cancel()
		var b [512]byte
		for {
			if _, err := conn.Read(b[:]); err != nil {
				return
			}
		}
	}()
	return ts, ctx, cancel
}

// release forgets a taken stream once it ended.
func (s *Server) release(ts *takenStream) {
	_ = ts.conn.Close()
	s.takeMu.Lock()
	delete(s.taken, ts)
	s.takeMu.Unlock()
	s.takeWG.Done()
}

// StreamsClosed waits, after CloseStreams, for the taken-over streams to
// end (http.Server.Shutdown does not wait for them), and closes the
// connections of those still open when ctx ends. No stream is taken over
// afterwards.
func (s *Server) StreamsClosed(ctx context.Context) {
	s.takeMu.Lock()
	s.takeEnded = true
	s.takeMu.Unlock()
	done := make(chan struct{})
	go func() { s.takeWG.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	s.takeMu.Lock()
	for ts := range s.taken {
		_ = ts.conn.Close()
	}
	s.takeMu.Unlock()
	<-done
}

// acceptsEncoding reports whether the request accepts the content coding,
// by the compress middleware's rule (chi's: a listed name containing it),
// on the codings compress left in the header (acceptedCodings: none
// refused with q=0).
func acceptsEncoding(r *http.Request, coding string) bool {
	for _, v := range strings.Split(strings.ToLower(r.Header.Get("Accept-Encoding")), ",") {
		if strings.Contains(v, coding) {
			return true
		}
	}
	return false
}

// writeHead writes the response's head, with h's fields, and first as the
// body's first chunk.
func (ts *takenStream) writeHead(h http.Header, first string) error {
	if ts.gz != nil {
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
	}
	h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	h.Set("Transfer-Encoding", "chunked")
	h.Set("Connection", "close")
	var head bytes.Buffer
	head.WriteString("HTTP/1.1 200 OK\r\n")
	_ = h.Write(&head)
	head.WriteString("\r\n")
	_ = ts.conn.SetWriteDeadline(time.Now().Add(ts.timeout))
	if _, err := ts.conn.Write(head.Bytes()); err != nil {
		return err
	}
	if ts.log != nil {
		ts.log.status = http.StatusOK
	}
	return ts.write(ts.chunk(first))
}

// chunk returns text as a chunk of the body.
func (ts *takenStream) chunk(text string) []byte {
	if ts.gz == nil {
		ts.body = append(ts.body[:0], text...)
	} else {
		ts.body = ts.gz.appendText(ts.body[:0], []byte(text))
	}
	return ts.frame(ts.body)
}

// frame wraps body in the chunked encoding's size line and end into ts.out.
func (ts *takenStream) frame(body []byte) []byte {
	var size [16]byte
	line := strconv.AppendInt(size[:0], int64(len(body)), 16)
	line = append(line, '\r', '\n')
	n := len(line) + len(body) + 2
	out := ts.out
	if cap(out) < n {
		out = make([]byte, n, n+n/2)
	}
	out = out[:n]
	copy(out[len(line):], body) // copy handles body overlapping out
	copy(out, line)
	out[n-2], out[n-1] = '\r', '\n'
	ts.out = out
	return out
}

// framesChunk is the chunk of frames' SSE bytes, each frame's encoded
// (and compressed) once for all its followers (fanout.Frame.Encoded).
func (ts *takenStream) framesChunk(frames []fanout.Frame) []byte {
	body := ts.body[:0]
	for _, f := range frames {
		if ts.gz == nil {
			body = append(body, f.SSE()...)
		} else {
			body = ts.gz.appendFrame(body, f)
		}
	}
	ts.body = body
	return ts.frame(body)
}

// flushRest writes what a write of the hub's left, waiting for the socket.
func (ts *takenStream) flushRest() error {
	if len(ts.rest) == 0 {
		return nil
	}
	err := ts.write(ts.rest)
	ts.rest = ts.rest[:0]
	return err
}

// Frames writes frames, waiting for the socket (the stream's goroutine).
func (ts *takenStream) Frames(frames []fanout.Frame) error {
	if err := ts.flushRest(); err != nil {
		return err
	}
	return ts.write(ts.framesChunk(frames))
}

// Text writes text as a chunk, waiting for the socket.
func (ts *takenStream) Text(text string) error {
	if err := ts.flushRest(); err != nil {
		return err
	}
	return ts.write(ts.chunk(text))
}

// TryWrite implements fanout.DirectWriter: one write system call that
// does not wait; what the socket did not take is kept for flushRest.
func (ts *takenStream) TryWrite(frames []fanout.Frame) (bool, error) {
	b := ts.framesChunk(frames)
	if len(ts.rest) > 0 {
		// Not parked with a rest, but should it be, the frames go after
		// it, for the stream's goroutine.
		ts.rest = append(ts.rest, b...)
		return false, nil
	}
	var n int
	var werr error
	err := ts.raw.Write(func(fd uintptr) bool {
		for {
			n, werr = syscall.Write(int(fd), b)
			if werr != syscall.EINTR {
				return true
			}
		}
	})
	if err == nil && werr != nil && werr != syscall.EAGAIN {
		err = werr
	}
	if err != nil {
		ts.broken = err
		return false, err
	}
	n = max(n, 0)
	ts.counted(n)
	if n == len(b) {
		return true, nil
	}
	ts.rest = append(ts.rest[:0], b[n:]...)
	return false, nil
}

// end ends the body (the gzip trailer, the last chunk); the connection is
// closed by release.
func (ts *takenStream) end() {
	if err := ts.flushRest(); err != nil || ts.broken != nil {
		return // a body cut off, not ended: the client resumes
	}
	var last []byte
	if ts.gz != nil {
		ts.body = ts.gz.appendEnd(ts.body[:0])
		last = ts.frame(ts.body)
	}
	_ = ts.write(append(last, "0\r\n\r\n"...))
}
