package tools_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/toolmark/toolmark/simplifiedagent/tools"
)

func TestWebSearch(t *testing.T) {
	fixture, err := os.ReadFile("testdata/searxng.json")
	if err != nil {
		t.Fatal(err)
	}
	var gotQuery string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.Error(w, "Forbidden", http.StatusForbidden) // SearxNG without the json format
			return
		}
		gotQuery = r.URL.Query().Get("q")
		w.Header().Set("Content-Type", "application/json")
		w.Write(fixture)
	}))
	defer srv.Close()

	ws := tools.NewWebSearch(srv.URL + "/")
	ws.Limit = 2
	got, err := ws.Call(context.Background(), `{"query":"toolcall markup & streaming"}`)
	if err != nil {
		t.Fatal(err)
	}
	if gotQuery != "toolcall markup & streaming" {
		t.Errorf("server got q=%q", gotQuery)
	}
	want := "Found 2 results for \"toolcall markup & streaming\".\n\n" +
		"[1] ItzCrazyKns/Perplexica: Perplexica is an AI-powered search engine. (https://github.com/ItzCrazyKns/Perplexica)\n" +
		"Perplexica is an AI-powered search engine. It is an Open source alternative to Perplexity AI.\n\n" +
		"[2] Using server-sent events - Web APIs | MDN (https://developer.mozilla.org/en-US/docs/Web/API/Server-sent_events/Using_server-sent_events)\n" +
		"Developing a web application that uses server-sent events is straightforward. You'll need a bit of code on the server to stream events to the front-end.\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if attrs := ws.ResultAttrs(got); len(attrs) != 1 || attrs[0].Value != "2" {
		t.Errorf("ResultAttrs = %v, want count 2", attrs)
	}

	broken := tools.NewWebSearch(srv.URL + "/nope")
	if _, err := broken.Call(context.Background(), "x"); err == nil || !strings.Contains(err.Error(), "HTTP 403") {
		t.Errorf("got %v, want HTTP 403", err)
	}
	if _, err := tools.NewWebSearch("").Call(context.Background(), "x"); err == nil {
		t.Error("no base URL: want an error")
	}
	if _, err := ws.Call(context.Background(), `{"query":"  "}`); err == nil {
		t.Error("empty query: want an error")
	}
}
