package bench

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// progress writes what the bench is doing: one-off messages, and while a
// load runs a line of counts, rewritten in place on a terminal and written
// every few seconds otherwise.
type progress struct {
	w   io.Writer // nil: silent
	tty bool
	mu  sync.Mutex // one writer at a time
	cur *counter   // the running load, if any
}

func newProgress(w io.Writer, tty bool) *progress { return &progress{w: w, tty: tty} }

// say writes a message on a line of its own.
func (p *progress) say(format string, args ...any) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	clear := ""
	if p.tty && p.cur != nil {
		clear = "\r\x1b[K"
	}
	fmt.Fprintf(p.w, "%sbench: %s\n", clear, fmt.Sprintf(format, args...))
}

// counter counts a load's progress.
type counter struct {
	p       *progress
	label   string
	unit    string // what total counts: "turns", "streams"
	total   int
	start   time.Time
	done    atomic.Int64
	failed  atomic.Int64
	events  atomic.Int64
	stop    chan struct{}
	stopped chan struct{}
}

// start begins a progress line for total turns or streams (unit).
func (p *progress) start(label string, total int, unit string) *counter {
	c := &counter{p: p, label: label, unit: unit, total: total, start: time.Now(), stop: make(chan struct{}), stopped: make(chan struct{})}
	if p.w == nil {
		close(c.stopped)
		return c
	}
	p.mu.Lock()
	p.cur = c
	p.mu.Unlock()
	go c.loop()
	return c
}

func (c *counter) event()           { c.events.Add(1) }
func (c *counter) turnDone(ok bool) { c.done.Add(1); c.failedIf(!ok) }
func (c *counter) failedIf(b bool) {
	if b {
		c.failed.Add(1)
	}
}

// line is the progress line as of now.
func (c *counter) line() string {
	el := time.Since(c.start)
	ev := c.events.Load()
	return fmt.Sprintf("bench: %s: %d/%d %s done, %d failed, %d events (%.0f/s), %s",
		c.label, c.done.Load(), c.total, c.unit, c.failed.Load(), ev, float64(ev)/max(el.Seconds(), 1e-3), fmtDur(el.Round(100*time.Millisecond)))
}

func (c *counter) loop() {
	defer close(c.stopped)
	every := 5 * time.Second
	if c.p.tty {
		every = 250 * time.Millisecond
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
			c.p.mu.Lock()
			if c.p.tty {
				fmt.Fprintf(c.p.w, "\r\x1b[K%s", c.line())
			} else {
				fmt.Fprintln(c.p.w, c.line())
			}
			c.p.mu.Unlock()
		}
	}
}

// finish writes the final line and ends the progress line.
func (c *counter) finish() {
	if c.p.w == nil {
		return
	}
	close(c.stop)
	<-c.stopped
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	clear := ""
	if c.p.tty {
		clear = "\r\x1b[K"
	}
	fmt.Fprintf(c.p.w, "%s%s\n", clear, c.line())
	c.p.cur = nil
}
