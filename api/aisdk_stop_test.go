package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// openAISDK opens an AI SDK stream (POST with body, or GET) and returns a
// reader of its data lines.
func openAISDK(t *testing.T, ctx context.Context, c *client, method, path, body string) (*http.Response, *bufio.Scanner) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := (&http.Client{}).Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %v %v", method, path, resp, err)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	return resp, sc
}

// nextPart returns the next data line of an AI SDK stream ("" at its end).
func nextPart(sc *bufio.Scanner) string {
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			return line
		}
	}
	return ""
}

// TestAISDKDropResumeStop drops a chat's stream mid-turn (the turn goes
// on), resumes it from the turn's start as useChat({resume: true}) does
// (the same parts, no gap, no duplicate), then stops the turn through the
// stop route: the stream ends with abort and every call in a final state.
func TestAISDKDropResumeStop(t *testing.T) {
	_, alice, _ := tokenServerWith(t, testserver.Options{DemoDelay: 20 * time.Millisecond})
	body := `{"id":"chat-stop","trigger":"submit-message","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":` +
		string(must(json.Marshal(twoToolQuestion))) + `}]}]}`
	ctx, drop := context.WithCancel(context.Background())
	resp, sc := openAISDK(t, ctx, alice, "POST", "/api/ai-sdk/chat", body)
	var seen []string
	for len(seen) < 4 {
		p := nextPart(sc)
		if p == "" {
			t.Fatalf("the stream ended after %q", seen)
		}
		seen = append(seen, p)
	}
	drop()
	resp.Body.Close()
	time.Sleep(50 * time.Millisecond)
	resp, sc = openAISDK(t, context.Background(), alice, "GET", "/api/ai-sdk/chat/chat-stop/stream", "")
	defer resp.Body.Close()
	var mid []struct {
		Role string `json:"role"`
	}
	alice.mustJSON("GET", "/api/ai-sdk/chat/chat-stop", "", http.StatusOK, &mid)
	if len(mid) != 1 || mid[0].Role != "user" {
		t.Errorf("the history mid-turn holds %+v, want the question alone", mid)
	}
	for i, want := range seen {
		if got := nextPart(sc); got != want {
			t.Fatalf("resumed part %d = %s, want %s", i, got, want)
		}
	}
	stopped, aborted := false, false
	calls := map[string]string{}
	var last string
	for p := nextPart(sc); p != ""; p = nextPart(sc) {
		last = p
		var part struct{ Type, ToolCallID string }
		_ = json.Unmarshal([]byte(p), &part)
		aborted = aborted || part.Type == "abort"
		if part.ToolCallID != "" {
			calls[part.ToolCallID] = part.Type
		}
		if !stopped && part.Type == "tool-input-start" {
			stopped = true
			if st, _, b := alice.do("POST", "/api/ai-sdk/chat/chat-stop/stop", ""); st != http.StatusAccepted {
				t.Fatalf("stop = %d: %s", st, b)
			}
		}
	}
	if last != "[DONE]" {
		t.Fatalf("the stream ended with %s", last)
	}
	if !stopped || !aborted || len(calls) == 0 {
		t.Fatalf("stopped %v, aborted %v, calls %v", stopped, aborted, calls)
	}
	for id, typ := range calls {
		if typ != "tool-output-available" && typ != "tool-output-error" {
			t.Errorf("call %s ended with %s", id, typ)
		}
	}
	var history []struct {
		Parts []map[string]any `json:"parts"`
	}
	alice.mustJSON("GET", "/api/ai-sdk/chat/chat-stop", "", http.StatusOK, &history)
	for _, p := range history[len(history)-1].Parts {
		if st, ok := p["state"]; ok && st != "output-available" && st != "output-error" && st != "done" {
			t.Errorf("stored part %v is not final", p)
		}
	}
	if st, _, _ := alice.do("GET", "/api/ai-sdk/chat/chat-stop/stream", ""); st != http.StatusNoContent {
		t.Errorf("resume after the stop = %d, want 204", st)
	}
}

// TestAISDKLateJoinerSeesTheSameParts opens a second stream of a chat (the
// resume route, gzip'd) while its turn runs and the first stream reads on:
// both end with the same parts in the same order, from the turn's start,
// none missing, none twice.
func TestAISDKLateJoinerSeesTheSameParts(t *testing.T) {
	_, alice, _ := tokenServerWith(t, testserver.Options{DemoDelay: 20 * time.Millisecond})
	body := `{"id":"chat-late","trigger":"submit-message","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":` +
		string(must(json.Marshal(twoToolQuestion))) + `}]}]}`
	resp, sc := openAISDK(t, context.Background(), alice, "POST", "/api/ai-sdk/chat", body)
	defer resp.Body.Close()
	var first []string
	for p := nextPart(sc); p != ""; p = nextPart(sc) {
		first = append(first, p)
		if len(first) == 6 {
			break
		}
	}
	type answer struct {
		st int
		h  http.Header
		b  []byte
	}
	late := make(chan answer)
	go func() {
		st, h, b := alice.do("GET", "/api/ai-sdk/chat/chat-late/stream", "", "Accept-Encoding", "gzip")
		late <- answer{st, h, b}
	}()
	for p := nextPart(sc); p != ""; p = nextPart(sc) {
		first = append(first, p)
	}
	a := <-late
	if a.st != http.StatusOK {
		t.Fatalf("the late joiner's GET = %d: %s", a.st, a.b)
	}
	var second []string
	for _, line := range strings.Split(string(gunzipBody(t, a.h, a.b)), "\n") {
		if p, ok := strings.CutPrefix(line, "data: "); ok {
			second = append(second, p)
		}
	}
	if len(first) < 10 || first[len(first)-1] != "[DONE]" {
		t.Fatalf("the first stream: %q", first)
	}
	if strings.Join(second, "\n") != strings.Join(first, "\n") {
		t.Errorf("the late joiner's %d parts differ from the first's %d:\n%q\n%q", len(second), len(first), second, first)
	}
}
