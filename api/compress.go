package api

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/go-chi/chi/v5/middleware"
	kgzip "github.com/klauspost/compress/gzip"
	kzlib "github.com/klauspost/compress/zlib"
)

// compressedTypes are the responses compress compresses.
var compressedTypes = []string{
	"text/event-stream", "application/json", "text/markdown", "text/html", "text/css",
	"text/javascript", "application/javascript", "text/plain", "image/svg+xml",
}

// compress compresses the responses of clients that accept it: JSON
// answers, exports, the page's files and event streams, whose frames are
// each flushed compressed as they are written. gzip keeps no state between
// writes (klauspost/compress's stateless mode), so an open stream holds
// about 2 KiB for it instead of the megabyte of a deflate window, and each
// frame — a render frame carries only what its blocks grew by — compresses
// on its own. deflate, for the rare client that accepts it alone, is zlib
// at its fastest level.
func compress() func(http.Handler) http.Handler {
	c := middleware.NewCompressor(1, compressedTypes...)
	c.SetEncoder("deflate", func(w io.Writer, level int) io.Writer {
		z, _ := kzlib.NewWriterLevel(w, level)
		return z
	})
	// Added last, gzip is preferred.
	c.SetEncoder("gzip", func(w io.Writer, _ int) io.Writer { return newGzipOffStack(w) })
	return func(next http.Handler) http.Handler {
		h := c.Handler(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if v := r.Header.Get("Accept-Encoding"); strings.Contains(v, ";") {
				r.Header.Set("Accept-Encoding", acceptedCodings(v))
			}
			h.ServeHTTP(w, r)
		})
	}
}

// acceptedCodings returns the codings an Accept-Encoding value accepts,
// without their parameters: "gzip;q=0, deflate;q=0.5" is "deflate". The
// compressor, and a taken-over stream after it (acceptsEncoding), look
// for a coding's name only, so a coding refused with q=0 must not reach
// them.
func acceptedCodings(v string) string {
	var out []string
	for _, c := range strings.Split(v, ",") {
		name, params, _ := strings.Cut(c, ";")
		name = strings.TrimSpace(name)
		if name == "" || refused(params) {
			continue
		}
		out = append(out, name)
	}
	return strings.Join(out, ", ")
}

// refused reports whether a coding's parameters give it a weight of 0.
func refused(params string) bool {
	for _, p := range strings.Split(params, ";") {
		k, v, ok := strings.Cut(p, "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && q == 0
		}
	}
	return false
}

// gzipOffStack is a stateless gzip writer whose compression runs on one of
// a few long-lived goroutines (compressing), not on its caller's.
// klauspost/compress's stateless deflate keeps a 16 KiB hash table on the
// stack of the goroutine that compresses: its stack doubles to 32 KiB and
// stays so. A page's render stream waits for minutes between frames, so
// every open page held a 32 KiB stack for that table (50 KiB an idle page
// in all, against 12 KiB an idle event stream: docs/performance.md). The
// compressed bytes land in a pooled buffer, and the caller's goroutine
// writes them on, so a slow client blocks its own handler, never a
// compressing goroutine; between writes the writer holds no buffer.
type gzipOffStack struct {
	z   *kgzip.Writer
	w   io.Writer
	out gzipSink // where z writes
}

// gzipSink collects what the gzip writer writes during one call.
type gzipSink struct{ buf *bytes.Buffer }

func (s *gzipSink) Write(p []byte) (int, error) { return s.buf.Write(p) }

var gzipBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func newGzipOffStack(w io.Writer) *gzipOffStack {
	g := &gzipOffStack{w: w}
	g.z, _ = kgzip.NewWriterLevel(&g.out, kgzip.StatelessCompression)
	return g
}

// Write compresses p, as a block of its own, and writes it on.
func (g *gzipOffStack) Write(p []byte) (n int, err error) {
	if len(p) == 0 {
		return 0, nil
	}
	g.out.buf = gzipBufs.Get().(*bytes.Buffer)
	compressing(func() { n, err = g.z.Write(p) })
	return n, errors.Join(err, g.writeOn())
}

// Flush writes nothing: stateless compression holds nothing back.
func (g *gzipOffStack) Flush() error { return nil }

// Close writes the gzip trailer (no compression: nothing is left to), and
// the header first if nothing was written.
func (g *gzipOffStack) Close() error {
	g.out.buf = gzipBufs.Get().(*bytes.Buffer)
	err := g.z.Close()
	return errors.Join(err, g.writeOn())
}

// Reset makes the writer write a new stream to w (the compress middleware
// pools its writers).
func (g *gzipOffStack) Reset(w io.Writer) {
	g.w = w
	g.z.Reset(&g.out)
}

// writeOn writes what the call compressed to w and gives its buffer back.
func (g *gzipOffStack) writeOn() error {
	b := g.out.buf
	g.out.buf = nil
	var err error
	if b.Len() > 0 {
		_, err = g.w.Write(b.Bytes())
	}
	if b.Cap() <= 64<<10 {
		b.Reset()
		gzipBufs.Put(b)
	}
	return err
}

// compressJob is one call of compressing.
type compressJob struct {
	f        func()
	panicked any
	done     chan struct{}
}

var (
	compressStart sync.Once
	compressJobs  chan *compressJob
	compressPool  = sync.Pool{New: func() any { return &compressJob{done: make(chan struct{}, 1)} }}
)

// compressing runs f on one of GOMAXPROCS goroutines kept for it, and
// returns when f has; a panic in f is raised again here.
func compressing(f func()) {
	compressStart.Do(func() {
		compressJobs = make(chan *compressJob)
		for range runtime.GOMAXPROCS(0) {
			go func() {
				for j := range compressJobs {
					j.run()
				}
			}()
		}
	})
	j := compressPool.Get().(*compressJob)
	j.f = f
	compressJobs <- j
	<-j.done
	p := j.panicked
	j.f, j.panicked = nil, nil
	compressPool.Put(j)
	if p != nil {
		panic(p)
	}
}

func (j *compressJob) run() {
	defer func() {
		j.panicked = recover()
		j.done <- struct{}{}
	}()
	j.f()
}
