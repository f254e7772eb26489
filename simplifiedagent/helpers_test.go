package simplifiedagent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/toolcallmarkup"
	"github.com/toolmark/toolmark/turnstate"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// recorder collects the events of a run.
type recorder struct {
	mu     sync.Mutex
	cond   *sync.Cond
	events []toolmark.Draft
	failOn func(toolmark.Draft) error
}

func newRecorder() *recorder {
	r := &recorder{}
	r.cond = sync.NewCond(&r.mu)
	return r
}

func (r *recorder) emit(_ context.Context, e toolmark.Draft) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failOn != nil {
		if err := r.failOn(e); err != nil {
			return err
		}
	}
	r.events = append(r.events, e)
	r.cond.Broadcast()
	return nil
}

// waitFor blocks until an event satisfies ok or ctx ends.
func (r *recorder) waitFor(ctx context.Context, ok func(toolmark.Draft) bool) bool {
	stop := context.AfterFunc(ctx, func() {
		r.mu.Lock()
		r.cond.Broadcast()
		r.mu.Unlock()
	})
	defer stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		for _, e := range r.events {
			if ok(e) {
				return true
			}
		}
		if ctx.Err() != nil {
			return false
		}
		r.cond.Wait()
	}
}

func (r *recorder) all() []toolmark.Draft {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]toolmark.Draft(nil), r.events...)
}

func (r *recorder) ofType(t toolmark.EventType) []toolmark.Draft {
	var out []toolmark.Draft
	for _, e := range r.all() {
		if e.Type == t {
			out = append(out, e)
		}
	}
	return out
}

// replay applies events to a turn state the way the runner does, checks
// that every tag the events name is the tag the state then holds, and that
// the JSON form of the events replays to the same content, and returns the
// content.
func replay(tb testing.TB, events []toolmark.Draft) string {
	tb.Helper()
	st := turnstate.New()
	for i, e := range events {
		if data, ok := e.Data.(toolmark.TextDeltaData); ok && data.Text == "" {
			tb.Fatalf("event %d: empty text_delta", i)
		}
		if err := st.Apply(e, time.Now()); err != nil {
			tb.Fatalf("event %d (%s): %v", i, e.Type, err)
		}
		if data, ok := e.Data.(toolmark.ToolCallData); ok {
			c, _ := st.Call(data.ToolCallID)
			if c.Markup != data.Markup || string(c.Status) != data.Status {
				tb.Fatalf("event %d (%s): state holds %q (%s), event says %q (%s)", i, e.Type, c.Markup, c.Status, data.Markup, data.Status)
			}
		}
	}
	// The replay of the logged (JSON) form gives the same content.
	logged := turnstate.New()
	for i, e := range events {
		raw, err := json.Marshal(e.Data)
		if err != nil {
			tb.Fatal(err)
		}
		if err := logged.ApplyEvent(toolmark.Event{Seq: int64(i + 1), Type: e.Type, Data: raw}); err != nil {
			tb.Fatalf("ApplyEvent: %v", err)
		}
	}
	if logged.Content() != st.Content() {
		tb.Fatalf("logged replay differs:\n%q\n%q", logged.Content(), st.Content())
	}
	return st.Content()
}

// content is the replayed content of the recorded events.
func (r *recorder) content(tb testing.TB) string {
	tb.Helper()
	return replay(tb, r.all())
}

// checkToolOrder checks each call's event order: started, delta*, running,
// one final event; or started, delta*, one final event.
func checkToolOrder(tb testing.TB, events []toolmark.Draft) {
	tb.Helper()
	state := map[string]toolmark.EventType{}
	for i, e := range events {
		data, ok := e.Data.(toolmark.ToolCallData)
		if !ok {
			continue
		}
		prev, seen := state[data.ToolCallID]
		bad := false
		switch e.Type {
		case toolmark.EventToolCallStarted:
			bad = seen
		case toolmark.EventToolCallDelta:
			bad = prev != toolmark.EventToolCallStarted && prev != toolmark.EventToolCallDelta
		case toolmark.EventToolCallRunning:
			bad = prev != toolmark.EventToolCallStarted && prev != toolmark.EventToolCallDelta
		case toolmark.EventToolCallSuccess, toolmark.EventToolCallError:
			bad = !seen || prev == toolmark.EventToolCallSuccess || prev == toolmark.EventToolCallError
		}
		if bad {
			tb.Fatalf("event %d: %s for %s after %q", i, e.Type, data.ToolCallID, prev)
		}
		state[data.ToolCallID] = e.Type
	}
	for id, last := range state {
		if last != toolmark.EventToolCallSuccess && last != toolmark.EventToolCallError {
			tb.Errorf("tool call %s ended at %s, want a final event", id, last)
		}
	}
}

// checkAllFinal checks that every tag of content has a final status.
func checkAllFinal(tb testing.TB, content string) {
	tb.Helper()
	for _, sp := range toolcallmarkup.Scan(content) {
		if !sp.Call.Status.Final() {
			tb.Errorf("tag %s has status %s, want final", sp.Call.ID, sp.Call.Status)
		}
	}
}

// golden compares the events as JSON lines with testdata/golden/name.jsonl.
func golden(tb testing.TB, name string, events []toolmark.Draft) {
	tb.Helper()
	var b bytes.Buffer
	for _, e := range events {
		line, err := json.Marshal(struct {
			Type toolmark.EventType `json:"type"`
			Data any                `json:"data"`
		}{e.Type, e.Data})
		if err != nil {
			tb.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	path := filepath.Join("testdata", "golden", name+".jsonl")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("reading golden file (run with -update): %v", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		tb.Errorf("events differ from %s (run with -update)\ngot:\n%s\nwant:\n%s", path, b.String(), want)
	}
}

// fakeSearcher answers searches from a fixed list; wait, when set, is
// called before answering.
type fakeSearcher struct {
	docs []toolmark.DocumentHit
	wait func(ctx context.Context, query string) error
}

func (f *fakeSearcher) SearchDocuments(ctx context.Context, query string, limit int) ([]toolmark.DocumentHit, error) {
	if f.wait != nil {
		if err := f.wait(ctx, query); err != nil {
			return nil, err
		}
	}
	var out []toolmark.DocumentHit
	words := strings.Fields(strings.ToLower(query))
	for _, d := range f.docs {
		text := strings.ToLower(d.Title + " " + d.Snippet)
		for _, w := range words {
			if strings.Contains(text, w) {
				out = append(out, d)
				break
			}
		}
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

var testDocs = []toolmark.DocumentHit{
	{ID: "d1", Source: "resume.md", Title: "Resuming a stream", Snippet: "A client that reconnects after a disconnect sends Last-Event-ID and gets what it missed.", Rank: 0.9},
	{ID: "d2", Source: "cancellation.md", Title: "Cancellation", Snippet: "Cancelling a turn gives every tag a final status: cancelled.", Rank: 0.8},
	{ID: "d3", Source: "crash-recovery.md", Title: "Crash recovery", Snippet: "After a crash, an expired lease finalises the turn: tags become error/interrupted.", Rank: 0.7},
}

// sseServer serves the fixture files in order, one per request, and keeps
// the request bodies.
type sseServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

func newSSEServer(tb testing.TB, files ...string) *sseServer {
	tb.Helper()
	s := &sseServer{}
	var fixtures [][]byte
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("testdata", "openai", f))
		if err != nil {
			tb.Fatal(err)
		}
		fixtures = append(fixtures, b)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, string(body))
		s.mu.Unlock()
		if r.URL.Path != "/v1/chat/completions" || n >= len(fixtures) {
			http.Error(w, `{"error":{"message":"unexpected request","type":"invalid_request_error"}}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for _, frame := range bytes.SplitAfter(fixtures[n], []byte("\n\n")) {
			w.Write(frame)
			fl.Flush()
		}
	}))
	tb.Cleanup(s.Close)
	return s
}

func (s *sseServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}
