package demo_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent"
	"github.com/toolmark/toolmark/simplifiedagent/demo"
	"github.com/toolmark/toolmark/simplifiedagent/tools"
	"github.com/toolmark/toolmark/toolcallmarkup"
	"github.com/toolmark/toolmark/turnstate"
)

type fakeSearcher struct{ docs []toolmark.DocumentHit }

func (f fakeSearcher) SearchDocuments(_ context.Context, query string, limit int) ([]toolmark.DocumentHit, error) {
	var out []toolmark.DocumentHit
	for _, d := range f.docs {
		for _, w := range strings.Fields(query) {
			if strings.Contains(strings.ToLower(d.Title+" "+d.Snippet), w) {
				out = append(out, d)
				break
			}
		}
	}
	return out[:min(limit, len(out))], nil
}

var docs = fakeSearcher{docs: []toolmark.DocumentHit{
	{ID: "1", Source: "resume.md", Title: "Resuming a stream", Snippet: "Clients resume with Last-Event-ID and get the events they missed."},
	{ID: "2", Source: "cancellation.md", Title: "Cancellation", Snippet: "Cancelling a turn sets every open tag to cancelled."},
}}

type events struct {
	mu sync.Mutex
	ev []toolmark.Draft
}

func (e *events) emit(_ context.Context, ev toolmark.Draft) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ev = append(e.ev, ev)
	return nil
}

// content applies the recorded events to a turn state, as the runner does.
func (e *events) content(tb testing.TB) string {
	tb.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	st := turnstate.New()
	for _, d := range e.ev {
		if err := st.Apply(d, time.Now()); err != nil {
			tb.Fatal(err)
		}
	}
	return st.Content()
}

func TestDemoRun(t *testing.T) {
	search := tools.NewSearchDocuments(docs)
	tests := []struct {
		name      string
		question  string
		wantTodos int
		wantTags  map[string]int
		wantCite  string
	}{
		{"simple", "How do clients resume a stream?", 0, map[string]int{"search_documents": 1}, "- [1] Resuming a stream — resume.md"},
		{"multi-part", "How does resume work? And what happens on cancellation?", 3,
			map[string]int{"search_documents": 2}, "- [2] Cancellation — cancellation.md"},
		{"compare", "Compare resume and cancellation", 3,
			map[string]int{"subagent": 2, "search_documents": 2}, "**Cancellation.** "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ev events
			res, err := simplifiedagent.Run(context.Background(), simplifiedagent.Request{
				Model: &demo.Model{},
				Input: tt.question,
				Tools: []simplifiedagent.Tool{search, simplifiedagent.NewTodoList(),
					simplifiedagent.NewSubagent(&demo.Model{}, search)},
			}, ev.emit)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			tags := map[string]int{}
			for _, sp := range toolcallmarkup.Scan(ev.content(t)) {
				if sp.Call.Status != toolcallmarkup.StatusSuccess {
					t.Errorf("tag %s %s: status %s, want success", sp.Call.Type, sp.Call.ID, sp.Call.Status)
				}
				tags[sp.Call.Type]++
			}
			for typ, n := range tt.wantTags {
				if tags[typ] != n {
					t.Errorf("got %d %s tags, want %d (content %q)", tags[typ], typ, n, ev.content(t))
				}
			}
			if len(res.Todos) != tt.wantTodos {
				t.Errorf("got %d todos, want %d", len(res.Todos), tt.wantTodos)
			}
			for _, td := range res.Todos {
				if td.Status != toolmark.TodoDone {
					t.Errorf("todo %q is %s, want done", td.Text, td.Status)
				}
			}
			if !strings.HasPrefix(res.Answer, demo.Banner) || !strings.Contains(res.Answer, tt.wantCite) {
				t.Errorf("answer %q lacks the banner or %q", res.Answer, tt.wantCite)
			}
			if !strings.Contains(ev.content(t), demo.Banner) {
				t.Errorf("content lacks the banner")
			}
		})
	}
}

func TestParts(t *testing.T) {
	tests := []struct {
		q    string
		want []string
	}{
		{"How do I resume?", []string{"How do I resume"}},
		{"What is a ToolCall? How is it escaped?", []string{"What is a ToolCall", "How is it escaped"}},
		{"Compare resume and cancellation", []string{"resume", "cancellation"}},
		{"Steps:\n- deploy\n- configure", []string{"deploy", "configure"}},
		{"How does resume work? Make a plan.", []string{"How does resume work"}},
	}
	for _, tt := range tests {
		if got := demo.Parts(tt.q); strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("Parts(%q) = %q, want %q", tt.q, got, tt.want)
		}
	}
}

func TestKeywords(t *testing.T) {
	if got, want := demo.Keywords("How do clients resume after a disconnect?"), "clients resume after disconnect"; got != want {
		t.Errorf("Keywords = %q, want %q", got, want)
	}
}

// TestDemoFetchURL: a URL in the question is fetched (through the real
// fetch_url tool, allow-listed for the loopback test server) and cited.
func TestDemoFetchURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><head><title>Release notes</title></head><body><p>Version 2 adds resume.</p></body></html>")
	}))
	defer srv.Close()
	var ev events
	res, err := simplifiedagent.Run(context.Background(), simplifiedagent.Request{
		Model: &demo.Model{},
		Input: "What does " + srv.URL + "/notes say?",
		Tools: []simplifiedagent.Tool{tools.NewSearchDocuments(docs), tools.NewFetchURL(netip.MustParsePrefix("127.0.0.1/32"))},
	}, ev.emit)
	if err != nil {
		t.Fatal(err)
	}
	var fetch *toolcallmarkup.ToolCall
	for _, sp := range toolcallmarkup.Scan(ev.content(t)) {
		if sp.Call.Type == "fetch_url" {
			c := sp.Call
			fetch = &c
		}
	}
	if fetch == nil || fetch.Status != toolcallmarkup.StatusSuccess || len(fetch.Attrs) == 0 || fetch.Attrs[0].Value != srv.URL+"/notes" {
		t.Fatalf("fetch_url tag %+v in %q", fetch, ev.content(t))
	}
	if !strings.Contains(res.Answer, "Version 2 adds resume [1].") || !strings.Contains(res.Answer, "[1] Release notes — "+srv.URL+"/notes") {
		t.Errorf("answer %q", res.Answer)
	}
}

// TestDemoPacing: with a delay the demo streams in many chunks and stops
// promptly when cancelled.
func TestDemoPacing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int32
	start := time.Now()
	_, err := simplifiedagent.Run(ctx, simplifiedagent.Request{
		Model: &demo.Model{Delay: 5 * time.Millisecond},
		Input: "How do clients resume a stream?",
		Tools: []simplifiedagent.Tool{tools.NewSearchDocuments(docs)},
	}, func(_ context.Context, e toolmark.Draft) error {
		if e.Type == toolmark.EventToolCallDelta && n.Add(1) == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || time.Since(start) > 2*time.Second {
		t.Errorf("got %v after %v, want a prompt context.Canceled", err, time.Since(start))
	}
}

// TestDemoExample: a question asking for an example gets the code block of
// a source, cited.
func TestDemoExample(t *testing.T) {
	var ev events
	res, err := simplifiedagent.Run(context.Background(), simplifiedagent.Request{
		Model: &demo.Model{}, Input: "How do clients resume a stream? Show an example.",
		Tools: []simplifiedagent.Tool{tools.NewSearchDocuments(docs)},
	}, ev.emit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Answer, "```sh\ncurl -N") || !strings.Contains(res.Answer, "from the event after number 42 [1]:") {
		t.Errorf("answer %q lacks the cited example", res.Answer)
	}
}
