package bench

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// newHTTPClient returns the bench's HTTP client: one transport for every
// request and stream, with no limit on connections per host (a stream
// holds its connection for the turn's life) and enough idle connections
// kept that thousands of turns reuse them instead of dialling again.
func newHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil, // the server is on this machine
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        0, // no limit
		MaxIdleConnsPerHost: 4096,
		MaxConnsPerHost:     0, // no limit
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}}
}

// maxReconnects is how many times a stream is reopened (with Last-Event-ID)
// after its connection fails, before it counts as failed.
const maxReconnects = 3

// streamResult is what one follower saw.
type streamResult struct {
	check SeqCheck
	// latencies holds arrival - event time of every event made after its
	// connection was open (live); replayAges the same for the events made
	// before (the turn's first events, or those read again after a
	// reconnection).
	latencies  []time.Duration
	types      []toolmark.EventType // the type of each event of latencies
	replayAges []time.Duration
	coolDown   int // live events made after the load's last arrival (streamer.steadyEnd)
	events     int
	first      time.Time          // arrival of the first event
	firstToken time.Time          // arrival of the first text_delta
	end        time.Time          // arrival of the terminal event
	terminal   toolmark.EventType // "" when the stream never ended
	endError   string             // the terminal event's error text
	reconnects int
	err        error
	// wire is the bytes of the response bodies as they came over the
	// connection (compressed, when the server compressed them), body the
	// same decompressed; frames counts render frames.
	wire, body int64
	frames     int
}

// streamer opens event streams on one server.
type streamer struct {
	base  string
	token string
	hc    *http.Client
	// onEvent is called for every event received (progress counting).
	onEvent func()
	// steadyEnd, when set, is the last arrival of an open-loop load: live
	// events made after it, while the load drains, are counted apart
	// (coolDown), not in the latencies.
	steadyEnd time.Time
}

// follow reads a turn's stream from the start until its terminal event,
// checking the sequence and timing every event: live events apart from
// those made before their connection was open. ready, if not nil, is
// closed at the first event (or when the stream fails before one).
// With render the stream is read as the web page reads it: rendered HTML
// (?render=html), compression accepted, the render frames counted instead
// of events.
func (s *streamer) follow(ctx context.Context, turnID string, ready chan<- struct{}, render bool) streamResult {
	var r streamResult
	signal := func() {
		if ready != nil {
			close(ready)
			ready = nil
		}
	}
	defer signal()
	for attempt := 0; ; attempt++ {
		err := s.once(ctx, turnID, &r, signal, render)
		if err == nil || ctx.Err() != nil {
			if err == nil && r.terminal == "" {
				err = errors.New("stream ended without a terminal event")
			}
			if ctx.Err() != nil && r.terminal == "" {
				err = ctx.Err()
			}
			r.err = err
			return r
		}
		if attempt == maxReconnects {
			r.err = err
			return r
		}
		r.reconnects++
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// once makes one connection and reads it until the terminal event (nil)
// or an error.
func (s *streamer) once(ctx context.Context, turnID string, r *streamResult, firstEvent func(), render bool) error {
	u := s.base + "/api/turns/" + url.PathEscape(turnID) + "/events"
	if render {
		u += "?render=html"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	if render {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	if last := r.check.Last(); last > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(last, 10))
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return fmt.Errorf("opening the stream: %w", unwrapURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("opening the stream: HTTP %d: %s", resp.StatusCode, toolcallmarkup.OneLine(string(b), 200))
	}
	// The response headers are in: an event made from now on is live, one
	// made before is replayed from the log or the server's memory.
	connected := time.Now()
	wire := &countingReader{r: resp.Body, n: &r.wire}
	var body io.Reader = wire
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(wire)
		if err != nil {
			return fmt.Errorf("reading the stream: %w", err)
		}
		body = zr
	}
	rd := client.NewReader(&countingReader{r: body, n: &r.body})
	for {
		fr, err := rd.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return errors.New("the stream ended before the turn's terminal event")
			}
			return fmt.Errorf("reading the stream: %w", unwrapURLError(err))
		}
		if fr.Data == "" {
			continue
		}
		now := time.Now()
		r.events++
		if r.events == 1 {
			r.first = now
			firstEvent()
		}
		if s.onEvent != nil {
			s.onEvent()
		}
		var done bool
		if render {
			done, err = r.renderFrame(fr, now)
		} else {
			done, err = r.event(fr, now, connected, s.steadyEnd)
		}
		if err != nil || done {
			return err
		}
	}
}

// event takes one event of an event stream and reports whether it ended
// the turn.
func (r *streamResult) event(fr client.Frame, now, connected, steadyEnd time.Time) (bool, error) {
	ev, err := decodeHead(fr.Data)
	if err != nil {
		return false, fmt.Errorf("decoding event %q: %w", fr.ID, err)
	}
	if ev.Type == "" {
		ev.Type = toolmark.EventType(fr.Event)
	}
	switch {
	case ev.Time.IsZero():
	case !ev.Time.After(connected):
		r.replayAges = append(r.replayAges, now.Sub(ev.Time))
	case !steadyEnd.IsZero() && ev.Time.After(steadyEnd):
		r.coolDown++
	default:
		r.latencies, r.types = append(r.latencies, now.Sub(ev.Time)), append(r.types, ev.Type)
	}
	if ev.Type == toolmark.EventTextDelta && r.firstToken.IsZero() {
		r.firstToken = now
	}
	if ev.Type == toolmark.EventSnapshot {
		var snap struct {
			Data toolmark.SnapshotData `json:"data"`
		}
		if err := json.Unmarshal([]byte(fr.Data), &snap); err != nil {
			return false, fmt.Errorf("decoding a snapshot: %w", err)
		}
		r.check.Snapshot(snap.Data.Seq)
		return false, nil
	}
	r.check.Observe(ev.Seq)
	if ev.Type.Terminal() {
		r.terminal, r.end = ev.Type, now
		if ev.Type != toolmark.EventTurnCompleted {
			r.endError = endData(fr.Data)
		}
		return true, nil
	}
	return false, nil
}

// renderHead is the part of a render frame the bench decodes.
type renderHead struct {
	Seq    int64 `json:"seq"`
	Count  int   `json:"count"`
	Blocks []struct {
		HTML string `json:"html"`
	} `json:"blocks"`
	Final bool `json:"final"`
	Turn  *struct {
		Status toolmark.TurnStatus `json:"status"`
		Error  string              `json:"error"`
	} `json:"turn"`
}

// renderFrame takes one frame of a rendering stream and reports whether it
// ended the turn. Render frames are coalesced, so their seqs may skip; they
// must not go back.
func (r *streamResult) renderFrame(fr client.Frame, now time.Time) (bool, error) {
	if fr.Event != "render" {
		return false, nil
	}
	var h renderHead
	if err := json.Unmarshal([]byte(fr.Data), &h); err != nil {
		return false, fmt.Errorf("decoding render frame %q: %w", fr.ID, err)
	}
	r.frames++
	r.check.Snapshot(h.Seq) // a frame that goes back counts as a duplicate
	if r.firstToken.IsZero() && h.Count > 0 && len(h.Blocks) > 0 && h.Blocks[0].HTML != "" {
		r.firstToken = now
	}
	if !h.Final {
		return false, nil
	}
	r.end, r.terminal = now, toolmark.EventTurnCompleted
	if h.Turn != nil {
		r.terminal = h.Turn.Status.EndEvent()
		if h.Turn.Status != toolmark.TurnCompleted {
			r.endError = h.Turn.Error
		}
	}
	return true, nil
}

// countingReader adds the bytes read through it to *n.
type countingReader struct {
	r io.Reader
	n *int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	*c.n += int64(k)
	return k, err
}

// unwrapURLError drops the method and URL net/http puts in front of a
// transport error: the bench names the operation itself.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
