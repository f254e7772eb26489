package statustext_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

func call(typ string, st toolcallmarkup.Status, kv ...string) toolcallmarkup.ToolCall {
	tc := toolcallmarkup.ToolCall{ID: "c", Type: typ, Status: st}
	for i := 0; i+1 < len(kv); i += 2 {
		tc.Attrs = append(tc.Attrs, toolcallmarkup.Attr{Key: kv[i], Value: kv[i+1]})
	}
	return tc
}

func TestText(t *testing.T) {
	long := strings.Repeat("word ", 20)
	tests := []struct {
		name string
		tc   toolcallmarkup.ToolCall
		want string
	}{
		{"search pending", call("search_documents", toolcallmarkup.StatusPending), "Preparing search…"},
		{"search running", call("search_documents", toolcallmarkup.StatusRunning, "query", "go generics"), "Searching knowledge base for:\ngo generics"},
		{"search running without query", call("search_documents", toolcallmarkup.StatusRunning), "Searching knowledge base…"},
		{"search found", call("search_documents", toolcallmarkup.StatusSuccess, "query", "q", "count", "5"), "Found 5 results for:\nq"},
		{"search found one", call("search_documents", toolcallmarkup.StatusSuccess, "query", "q", "count", "1"), "Found 1 result for:\nq"},
		{"search bad count", call("search_documents", toolcallmarkup.StatusSuccess, "query", "q", "count", "x"), "Searched knowledge base for:\nq"},
		{"search failed", call("search_documents", toolcallmarkup.StatusError, "query", "q"), "Search failed for:\nq"},
		{"search cancelled", call("search_documents", toolcallmarkup.StatusCancelled), "Search cancelled"},
		{"query on one line", call("search_documents", toolcallmarkup.StatusRunning, "query", "a\n\tb"), "Searching knowledge base for:\na b"},
		{"long query", call("web_search", toolcallmarkup.StatusRunning, "query", long), "Searching the web for:\n" + toolcallmarkup.ShortenRunes(strings.TrimSpace(long), 60)},
		{"web found", call("web_search", toolcallmarkup.StatusSuccess, "query", "q", "count", "2"), "Found 2 web results for:\nq"},
		{"fetch running", call("fetch_url", toolcallmarkup.StatusRunning, "url", "https://example.com/"), "Fetching:\nhttps://example.com/"},
		{"fetch failed", call("fetch_url", toolcallmarkup.StatusError, "url", "https://example.com/"), "Could not fetch:\nhttps://example.com/"},
		{"fetch without url", call("fetch_url", toolcallmarkup.StatusSuccess), "Fetched a page"},
		{"subagent", call("subagent", toolcallmarkup.StatusRunning, "task", "compare"), "Sub-agent working on:\ncompare"},
		{"subagent done", call("subagent", toolcallmarkup.StatusSuccess), "Sub-agent finished"},
		{"todo", call("todo_list", toolcallmarkup.StatusSuccess, "count", "3"), "Plan updated (3 items)"},
		{"todo one", call("todo_list", toolcallmarkup.StatusSuccess, "count", "1"), "Plan updated (1 item)"},
		{"generic", call("get_weather", toolcallmarkup.StatusRunning), "Running get_weather…"},
		{"unknown status", call("get_weather", "bogus"), "Preparing get_weather…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := statustext.Text(tt.tc); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSubjectLine: a status has at most two lines and its subject at most
// DisplayLimit runes, whatever the attribute holds.
func TestSubjectLine(t *testing.T) {
	for _, v := range []string{"", " ", "\n\n", strings.Repeat("é", 200), "a\r\nb\u2028c"} {
		for _, typ := range []string{"search_documents", "web_search", "fetch_url", "subagent"} {
			for _, st := range []toolcallmarkup.Status{toolcallmarkup.StatusRunning, toolcallmarkup.StatusSuccess, toolcallmarkup.StatusError} {
				got := statustext.Text(call(typ, st, "query", v, "url", v, "task", v))
				if n := strings.Count(got, "\n"); n > 1 {
					t.Errorf("%s %s %q: %d line breaks in %q", typ, st, v, n, got)
				}
				if _, subject := statustext.Lines(got); utf8.RuneCountInString(subject) > statustext.DisplayLimit {
					t.Errorf("%s %s: subject of %d runes", typ, st, utf8.RuneCountInString(subject))
				}
			}
		}
	}
}

func TestThought(t *testing.T) {
	for ms, want := range map[int64]string{0: "Thought for 1 s", 1499: "Thought for 1 s", 1500: "Thought for 2 s", 12_000: "Thought for 12 s"} {
		if got := statustext.Thought(ms); got != want {
			t.Errorf("Thought(%d) = %q, want %q", ms, got, want)
		}
	}
}
