package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
)

// turnEvents returns the event log of a made-up turn of n events that ends
// with turn_completed.
func turnEvents(tb testing.TB, n int) []toolmark.Event {
	tb.Helper()
	evs := make([]toolmark.Event, n)
	for i := range evs {
		seq := int64(i + 1)
		typ, data := toolmark.EventTextDelta, any(toolmark.TextDeltaData{Text: fmt.Sprintf("word %d\nwith a line\r\n", seq)})
		switch {
		case i == 0:
			typ, data = toolmark.EventTurnStarted, toolmark.TurnStartedData{Model: "demo"}
		case i == n-1:
			typ, data = toolmark.EventTurnCompleted, toolmark.TurnEndData{Status: toolmark.TurnCompleted}
		case i%5 == 0:
			typ, data = toolmark.EventToolCallRunning, toolmark.ToolCallData{ToolCallID: "call_1", Name: "search_documents", Status: "running",
				Markup: `<ToolCall type="search_documents" status="running" toolCallId="call_1" query="a &amp; b"></ToolCall>`}
		}
		evs[i] = toolmark.Event{Seq: seq, TurnID: "turn_1", MessageID: "msg_1", Type: typ, Time: time.Unix(1700000000, 0).UTC(), Data: mustJSON(tb, data)}
	}
	return evs
}

func mustJSON(tb testing.TB, v any) json.RawMessage {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// frameBytes is the SSE frame of one event, as the server writes it.
func frameBytes(tb testing.TB, ev toolmark.Event) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := WriteFrame(&b, Frame{ID: strconv.FormatInt(ev.Seq, 10), Event: string(ev.Type), Data: string(mustJSON(tb, ev))}); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// eventServer serves one turn's events by Last-Event-ID or ?after=, and
// lets a test decide how each connection misbehaves.
type eventServer struct {
	tb     testing.TB
	events []toolmark.Event
	mu     sync.Mutex
	conns  int
	// plan decides, for connection number n (0-based) and the bytes it
	// would send, how many bytes to send before cutting the connection
	// (-1: send all) and from which cursor to replay (it may be lower than
	// the client's, to send duplicates).
	plan    func(n int, cursor int64, stream []byte) (cut int, from int64)
	cursors []int64
}

func (s *eventServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/turns/turn_1/events" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error":{"code":"not_found","message":"turn not found"}}`)
		return
	}
	var cursor int64
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		cursor, _ = strconv.ParseInt(v, 10, 64)
	} else if v := r.URL.Query().Get("after"); v != "" {
		cursor, _ = strconv.ParseInt(v, 10, 64)
	}
	s.mu.Lock()
	n := s.conns
	s.conns++
	s.cursors = append(s.cursors, cursor)
	s.mu.Unlock()

	build := func(from int64) []byte {
		b := bytes.NewBufferString("retry: 1\n\n: keep-alive\n\n")
		for _, ev := range s.events {
			if ev.Seq > from {
				b.Write(frameBytes(s.tb, ev))
			}
		}
		return b.Bytes()
	}
	cut, from := -1, cursor
	if s.plan != nil {
		cut, from = s.plan(n, cursor, build(cursor))
	}
	out := build(from)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if cut >= 0 && cut < len(out) {
		_, _ = w.Write(out[:cut])
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler) // cut the connection mid-stream
	}
	_, _ = w.Write(out)
}

func newTestClient(url string, opts ...Option) *Client {
	return New(url, append([]Option{WithMaxBackoff(5 * time.Millisecond)}, opts...)...)
}

func collect(ctx context.Context, c *Client, after int64) ([]toolmark.Event, error) {
	var got []toolmark.Event
	err := c.Follow(ctx, "turn_1", after, func(ev toolmark.Event) error {
		got = append(got, ev)
		return nil
	})
	return got, err
}

func sameEvents(tb testing.TB, got, want []toolmark.Event) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Fatalf("got %d events, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := mustJSON(tb, got[i]), mustJSON(tb, want[i])
		if !bytes.Equal(g, w) {
			tb.Fatalf("event %d: got %s, want %s", i, g, w)
		}
	}
}

func TestFollowUninterrupted(t *testing.T) {
	evs := turnEvents(t, 20)
	srv := httptest.NewServer(&eventServer{tb: t, events: evs})
	defer srv.Close()
	got, err := collect(context.Background(), newTestClient(srv.URL), 0)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, got, evs)
}

func TestFollowAfter(t *testing.T) {
	evs := turnEvents(t, 20)
	es := &eventServer{tb: t, events: evs}
	srv := httptest.NewServer(es)
	defer srv.Close()
	got, err := collect(context.Background(), newTestClient(srv.URL), 7)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, got, evs[7:])
	if es.cursors[0] != 7 {
		t.Errorf("got cursor %d, want 7", es.cursors[0])
	}
}

// TestFollowResume cuts the connection at random byte offsets (mid-frame
// included), sometimes replays from before the client's cursor, and checks
// that the delivered events are exactly the turn's log, 200 times.
func TestFollowResume(t *testing.T) {
	evs := turnEvents(t, 40)
	for iter := 0; iter < 200; iter++ {
		rng := rand.New(rand.NewPCG(uint64(iter), 42))
		cuts := 1 + rng.IntN(8)
		es := &eventServer{tb: t, events: evs}
		es.plan = func(n int, cursor int64, stream []byte) (int, int64) {
			from := cursor
			if rng.IntN(4) == 0 {
				from = max(0, cursor-int64(rng.IntN(5))) // resend some
			}
			if n >= cuts {
				return -1, from
			}
			return rng.IntN(len(stream) + 1), from
		}
		srv := httptest.NewServer(es)
		got, err := collect(context.Background(), newTestClient(srv.URL, WithRetries(20)), 0)
		srv.Close()
		if err != nil {
			t.Fatalf("iteration %d: %v", iter, err)
		}
		sameEvents(t, got, evs)
		if es.conns > cuts+1 { // fewer when a cut came after the terminal event
			t.Fatalf("iteration %d: %d connections, want at most %d", iter, es.conns, cuts+1)
		}
		// Every reconnection resumed after the last delivered event.
		for i := 1; i < len(es.cursors); i++ {
			if es.cursors[i] < es.cursors[i-1] {
				t.Fatalf("iteration %d: cursor went back: %v", iter, es.cursors)
			}
		}
	}
}

func TestFollowGapReconnects(t *testing.T) {
	evs := turnEvents(t, 10)
	es := &eventServer{tb: t, events: evs}
	es.plan = func(n int, cursor int64, stream []byte) (int, int64) {
		if n == 0 {
			return -1, cursor + 3 // skips events 1..3: the client must not accept that
		}
		return -1, cursor
	}
	srv := httptest.NewServer(es)
	defer srv.Close()
	got, err := collect(context.Background(), newTestClient(srv.URL), 0)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, got, evs)
}

func TestFollowSnapshotResets(t *testing.T) {
	snap := toolmark.Event{Seq: 30, TurnID: "turn_1", Type: toolmark.EventSnapshot,
		Data: mustJSON(t, toolmark.SnapshotData{Content: "so far", Seq: 30, Status: toolmark.TurnRunning})}
	end := toolmark.Event{Seq: 31, TurnID: "turn_1", Type: toolmark.EventTurnCompleted, Data: mustJSON(t, toolmark.TurnEndData{Status: toolmark.TurnCompleted})}
	var conns int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conns++
		w.Header().Set("Content-Type", "text/event-stream")
		switch conns {
		case 1:
			w.Write(frameBytes(t, turnEvents(t, 5)[0]))
			w.Write(frameBytes(t, snap))
			// ends without the terminal event: the client resumes after 30
		default:
			if got := r.Header.Get("Last-Event-ID"); got != "30" {
				t.Errorf("Last-Event-ID %q, want 30", got)
			}
			w.Write(frameBytes(t, snap)) // may be sent again: delivered again, it resets
			w.Write(frameBytes(t, end))
		}
	}))
	defer srv.Close()
	got, err := collect(context.Background(), newTestClient(srv.URL), 0)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range got {
		types = append(types, string(ev.Type))
	}
	want := "turn_started snapshot snapshot turn_completed"
	if strings.Join(types, " ") != want {
		t.Errorf("got %v, want %s", types, want)
	}
}

func TestFollowFinalSnapshotEnds(t *testing.T) {
	snap := toolmark.Event{Seq: 9, TurnID: "turn_1", Type: toolmark.EventSnapshot,
		Data: mustJSON(t, toolmark.SnapshotData{Content: "done", Seq: 9, Status: toolmark.TurnCompleted})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(frameBytes(t, snap))
	}))
	defer srv.Close()
	got, err := collect(context.Background(), newTestClient(srv.URL), 0)
	if err != nil || len(got) != 1 {
		t.Fatalf("got %d events, err %v", len(got), err)
	}
}

func TestFollowErrors(t *testing.T) {
	t.Run("not found is final", func(t *testing.T) {
		srv := httptest.NewServer(&eventServer{tb: t})
		defer srv.Close()
		err := New(srv.URL).Follow(context.Background(), "nope", 0, func(toolmark.Event) error { return nil })
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.Status != 404 || apiErr.Code != toolmark.ENOTFOUND {
			t.Fatalf("got %v, want a 404 not_found APIError", err)
		}
	})
	t.Run("callback error", func(t *testing.T) {
		srv := httptest.NewServer(&eventServer{tb: t, events: turnEvents(t, 10)})
		defer srv.Close()
		stop := errors.New("stop")
		n := 0
		err := New(srv.URL).Follow(context.Background(), "turn_1", 0, func(toolmark.Event) error {
			n++
			if n == 3 {
				return stop
			}
			return nil
		})
		if err != stop || n != 3 {
			t.Fatalf("got %v after %d events, want stop after 3", err, n)
		}
	})
	t.Run("unavailable is retried", func(t *testing.T) {
		evs := turnEvents(t, 5)
		es := &eventServer{tb: t, events: evs}
		var n int
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n++
			if n <= 2 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprint(w, `{"error":{"code":"unavailable","message":"starting"}}`)
				return
			}
			es.ServeHTTP(w, r)
		}))
		defer srv.Close()
		got, err := collect(context.Background(), newTestClient(srv.URL), 0)
		if err != nil {
			t.Fatal(err)
		}
		sameEvents(t, got, evs)
	})
	t.Run("retries run out", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "retry: 1\n\n")
		}))
		defer srv.Close()
		_, err := collect(context.Background(), newTestClient(srv.URL, WithRetries(3)), 0)
		if err == nil || !strings.Contains(err.Error(), "giving up") {
			t.Fatalf("got %v, want giving up", err)
		}
	})
	t.Run("idle connection is replaced", func(t *testing.T) {
		evs := turnEvents(t, 4)
		es := &eventServer{tb: t, events: evs}
		var mu sync.Mutex
		n := 0
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			n++
			first := n == 1
			mu.Unlock()
			if first {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Write(frameBytes(t, evs[0]))
				http.NewResponseController(w).Flush()
				<-r.Context().Done() // hangs, silent, until the client gives up on it
				return
			}
			es.ServeHTTP(w, r)
		}))
		defer srv.Close()
		got, err := collect(context.Background(), newTestClient(srv.URL, WithIdleTimeout(100*time.Millisecond)), 0)
		if err != nil {
			t.Fatal(err)
		}
		sameEvents(t, got, evs)
	})
	t.Run("context cancelled", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			http.NewResponseController(w).Flush()
			<-r.Context().Done()
		}))
		defer srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := collect(ctx, New(srv.URL), 0)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want deadline exceeded", err)
		}
	})
}
