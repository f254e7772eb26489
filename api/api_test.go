package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/testserver"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// tokenServer starts a server in token mode with two users.
func tokenServer(t *testing.T) (srv *testserver.Server, alice, bob *client) {
	t.Helper()
	return tokenServerWith(t, testserver.Options{})
}

// tokenServerWith is tokenServer with options (the auth mode is token).
func tokenServerWith(t *testing.T, opts testserver.Options) (srv *testserver.Server, alice, bob *client) {
	t.Helper()
	opts.Auth = "token"
	srv = testserver.Start(t, opts)
	ctx := context.Background()
	tok := func(name string) string {
		u, err := srv.DB.EnsureUser(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		tk, err := srv.DB.CreateToken(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		return tk
	}
	return srv, newClient(t, srv.URL, tok("alice")), newClient(t, srv.URL, tok("bob"))
}

// TestRoutes runs every route as a scenario: the owner, another user, no
// token, and bad input.
func TestRoutes(t *testing.T) {
	srv, alice, bob := tokenServer(t)
	anon := newClient(t, srv.URL, "")
	bad := newClient(t, srv.URL, "tm_not-a-real-token")

	// A finished turn of alice's to point the routes at.
	var chat struct {
		ConversationID string        `json:"conversationId"`
		Turn           toolmark.Turn `json:"turn"`
		Message        struct {
			toolmark.Message
			HTML string `json:"html"`
		} `json:"message"`
	}
	alice.mustJSON(http.MethodPost, "/api/chat", `{"content":"How does resume work?"}`, http.StatusOK, &chat)
	if chat.Turn.Status != toolmark.TurnCompleted {
		t.Fatalf("chat turn: got status %s, want completed", chat.Turn.Status)
	}
	conv, turn := chat.ConversationID, chat.Turn.ID
	emptyConv := alice.newConversation()
	missing := "00000000-0000-4000-8000-000000000000"
	big := `{"content":"` + strings.Repeat("a", 70<<10) + `"}`
	huge := `{"content":"` + strings.Repeat("a", 1<<20+10) + `"}`

	type scenario struct {
		name    string
		c       *client
		method  string
		path    string
		body    string
		headers []string
		status  int
		code    string
		check   func(t *testing.T, body []byte)
	}
	contains := func(s string) func(*testing.T, []byte) {
		return func(t *testing.T, b []byte) {
			if !strings.Contains(string(b), s) {
				t.Errorf("body %.300s does not contain %q", b, s)
			}
		}
	}
	lacks := func(s string) func(*testing.T, []byte) {
		return func(t *testing.T, b []byte) {
			if strings.Contains(string(b), s) {
				t.Errorf("body %.300s contains %q", b, s)
			}
		}
	}
	scenarios := []scenario{
		{name: "healthz", c: anon, method: "GET", path: "/healthz", status: 200, check: contains(`"ok"`)},
		{name: "readyz", c: anon, method: "GET", path: "/readyz", status: 200, check: contains(`"ready"`)},
		{name: "metrics", c: anon, method: "GET", path: "/metrics", status: 200, check: contains("toolmark_turns_total")},
		{name: "info without token", c: anon, method: "GET", path: "/api/info", status: 401, code: "unauthorized"},
		{name: "info with a bad token", c: bad, method: "GET", path: "/api/info", status: 401, code: "unauthorized"},
		{name: "info", c: alice, method: "GET", path: "/api/info", status: 200, check: contains(`"demo":true`)},
		{name: "info hands over the status texts", c: alice, method: "GET", path: "/api/info", status: 200, check: contains(`"texts":{"thinking":"Thinking…"}`)},
		{name: "unknown route", c: alice, method: "GET", path: "/api/nope", status: 404, code: "not_found"},
		{name: "wrong method", c: alice, method: "PUT", path: "/api/conversations", status: 405, code: "method_not_allowed"},

		{name: "create conversation", c: alice, method: "POST", path: "/api/conversations", body: `{"title":"x"}`, status: 201, check: contains(`"title":"x"`)},
		{name: "create conversation, no body", c: alice, method: "POST", path: "/api/conversations", status: 201},
		{name: "malformed JSON", c: alice, method: "POST", path: "/api/conversations", body: `{"title":`, status: 400, code: "invalid"},
		{name: "unknown field", c: alice, method: "POST", path: "/api/conversations", body: `{"titel":"x"}`, status: 400, code: "invalid", check: contains("titel")},
		{name: "two objects", c: alice, method: "POST", path: "/api/conversations", body: `{} {}`, status: 400, code: "invalid"},
		{name: "not an object", c: alice, method: "POST", path: "/api/conversations", body: `[1]`, status: 400, code: "invalid"},
		{name: "wrong content type", c: alice, method: "POST", path: "/api/conversations", body: `{"title":"x"}`, headers: []string{"Content-Type", "text/plain"}, status: 415, code: "unsupported_media_type"},
		{name: "invalid UTF-8", c: alice, method: "POST", path: "/api/conversations", body: "{\"title\":\"\xff\xfe\"}", status: 400, code: "invalid"},
		{name: "body over 1 MiB", c: alice, method: "POST", path: "/api/conversations/" + emptyConv + "/turns", body: huge, status: 413, code: "too_large"},
		{name: "create conversation no token", c: anon, method: "POST", path: "/api/conversations", body: `{}`, status: 401, code: "unauthorized"},

		{name: "list conversations", c: alice, method: "GET", path: "/api/conversations", status: 200, check: contains(conv)},
		{name: "list conversations of another user", c: bob, method: "GET", path: "/api/conversations", status: 200, check: lacks(conv)},
		{name: "get conversation", c: alice, method: "GET", path: "/api/conversations/" + conv, status: 200, check: func(t *testing.T, b []byte) {
			var out struct {
				Messages []struct {
					Role, Content, HTML, Status string
				} `json:"messages"`
			}
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatal(err)
			}
			if len(out.Messages) != 2 {
				t.Fatalf("got %d messages, want 2", len(out.Messages))
			}
			a := out.Messages[1]
			if a.Role != "assistant" || a.Status != "complete" {
				t.Errorf("assistant message: got role %s status %s", a.Role, a.Status)
			}
			calls := toolcallmarkup.Parse(a.Content)
			if len(calls) == 0 {
				t.Errorf("assistant content has no tool calls: %.300s", a.Content)
			}
			for _, c := range calls {
				if !c.Status.Final() {
					t.Errorf("tool call %s is %s after the turn", c.ID, c.Status)
				}
			}
			if !strings.Contains(a.HTML, `data-tool-call-id=`) {
				t.Errorf("html has no tool widget: %.300s", a.HTML)
			}
		}},
		{name: "get conversation of another user", c: bob, method: "GET", path: "/api/conversations/" + conv, status: 404, code: "not_found"},
		{name: "get missing conversation", c: alice, method: "GET", path: "/api/conversations/" + missing, status: 404, code: "not_found"},
		{name: "get conversation with a bad id", c: alice, method: "GET", path: "/api/conversations/not-an-id", status: 404, code: "not_found"},
		{name: "delete conversation of another user", c: bob, method: "DELETE", path: "/api/conversations/" + conv, status: 404, code: "not_found"},

		{name: "turn in another user's conversation", c: bob, method: "POST", path: "/api/conversations/" + conv + "/turns", body: `{"content":"hi"}`, status: 404, code: "not_found"},
		{name: "turn in a missing conversation", c: alice, method: "POST", path: "/api/conversations/" + missing + "/turns", body: `{"content":"hi"}`, status: 404, code: "not_found"},
		{name: "turn with empty content", c: alice, method: "POST", path: "/api/conversations/" + emptyConv + "/turns", body: `{"content":"  "}`, status: 400, code: "invalid"},
		{name: "turn with a message over the limit", c: alice, method: "POST", path: "/api/conversations/" + emptyConv + "/turns", body: big, status: 413, code: "too_large"},
		{name: "turn with NUL", c: alice, method: "POST", path: "/api/conversations/" + emptyConv + "/turns", body: `{"content":"a\u0000b"}`, status: 400, code: "invalid"},
		{name: "turn without content field", c: alice, method: "POST", path: "/api/conversations/" + emptyConv + "/turns", body: `{}`, status: 400, code: "invalid"},

		{name: "get turn", c: alice, method: "GET", path: "/api/turns/" + turn, status: 200, check: contains(`"status":"completed"`)},
		{name: "get turn of another user", c: bob, method: "GET", path: "/api/turns/" + turn, status: 404, code: "not_found"},
		{name: "get missing turn", c: alice, method: "GET", path: "/api/turns/" + missing, status: 404, code: "not_found"},
		{name: "events", c: alice, method: "GET", path: "/api/turns/" + turn + "/events", status: 200, check: contains("event: turn_completed")},
		{name: "events after a cursor", c: alice, method: "GET", path: "/api/turns/" + turn + "/events?after=3", status: 200, check: lacks("id: 3\n")},
		{name: "events of another user", c: bob, method: "GET", path: "/api/turns/" + turn + "/events", status: 404, code: "not_found"},
		{name: "events with a bad Last-Event-ID", c: alice, method: "GET", path: "/api/turns/" + turn + "/events", headers: []string{"Last-Event-ID", "abc"}, status: 400, code: "invalid"},
		{name: "events with a negative cursor", c: alice, method: "GET", path: "/api/turns/" + turn + "/events?after=-1", status: 400, code: "invalid"},
		{name: "cancel a finished turn", c: alice, method: "POST", path: "/api/turns/" + turn + "/cancel", status: 202, check: contains(`"status":"completed"`)},
		{name: "cancel another user's turn", c: bob, method: "POST", path: "/api/turns/" + turn + "/cancel", status: 404, code: "not_found"},
		{name: "chat in another user's conversation", c: bob, method: "POST", path: "/api/chat", body: `{"conversationId":"` + conv + `","content":"hi"}`, status: 404, code: "not_found"},
		{name: "chat with empty content", c: alice, method: "POST", path: "/api/chat", body: `{"content":""}`, status: 400, code: "invalid"},

		{name: "session with a bad token", c: anon, method: "POST", path: "/api/session", body: `{"token":"nope"}`, status: 401, code: "unauthorized"},
		{name: "session", c: anon, method: "POST", path: "/api/session", body: `{"token":"` + alice.token + `"}`, status: 204},
		{name: "delete session", c: anon, method: "DELETE", path: "/api/session", status: 204},
		{name: "delete another user's conversation leaves it", c: alice, method: "GET", path: "/api/conversations/" + conv, status: 200},
		{name: "delete own conversation", c: alice, method: "DELETE", path: "/api/conversations/" + emptyConv, status: 204},
		{name: "deleted conversation is gone", c: alice, method: "GET", path: "/api/conversations/" + emptyConv, status: 404, code: "not_found"},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			st, h, b := sc.c.do(sc.method, sc.path, sc.body, sc.headers...)
			if st != sc.status {
				t.Fatalf("got status %d, want %d: %.300s", st, sc.status, b)
			}
			if st >= 400 {
				var e struct {
					Error struct{ Code, Message string } `json:"error"`
				}
				if err := json.Unmarshal(b, &e); err != nil || e.Error.Message == "" {
					t.Fatalf("error body %q is not {error:{code,message}}", b)
				}
				if e.Error.Code != sc.code {
					t.Errorf("got code %q, want %q", e.Error.Code, sc.code)
				}
				if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
					t.Errorf("got Content-Type %q for an error", ct)
				}
			}
			if sc.check != nil {
				sc.check(t, b)
			}
		})
	}
}

// TestSessionCookie checks that the cookie from /api/session authenticates
// the event stream, as a browser's EventSource needs, and is locked down.
func TestSessionCookie(t *testing.T) {
	srv, alice, _ := tokenServer(t)
	st, h, b := newClient(t, srv.URL, "").do("POST", "/api/session", `{"token":"`+alice.token+`"}`)
	if st != 204 {
		t.Fatalf("got status %d: %s", st, b)
	}
	ck := h.Get("Set-Cookie")
	for _, want := range []string{"toolmark_session=", "HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(ck, want) {
			t.Errorf("Set-Cookie %q lacks %q", ck, want)
		}
	}
	req, _ := http.NewRequest("GET", srv.URL+"/api/info", nil)
	req.Header.Set("Cookie", strings.SplitN(ck, ";", 2)[0])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("with the cookie: got status %d, want 200", resp.StatusCode)
	}
}

// TestLocalModeRefusesForeignHost checks the DNS-rebinding guard.
func TestLocalModeRefusesForeignHost(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	for _, tt := range []struct {
		host string
		want int
	}{
		{"evil.example", 401},
		{"127.0.0.1", 200},
		{"localhost:8080", 200},
		{"[::1]:1", 200},
		{"127.0.0.1.evil.example", 401},
	} {
		t.Run(tt.host, func(t *testing.T) {
			req, _ := http.NewRequest("GET", srv.URL+"/api/info", nil)
			req.Host = tt.host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("got %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
}

// TestConflictAndIdempotency checks 409 for a second active turn and that
// an Idempotency-Key returns the same turn.
func TestConflictAndIdempotency(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 20 * 1e6})
	c := newClient(t, srv.URL, "")
	conv := c.newConversation()
	path := "/api/conversations/" + conv + "/turns"
	var first, again turnResp
	st, _, b := c.do("POST", path, `{"content":"How does resume work?"}`, "Idempotency-Key", "k1")
	if st != 202 || json.Unmarshal(b, &first) != nil {
		t.Fatalf("first: got %d %s", st, b)
	}
	st, _, b = c.do("POST", path, `{"content":"How does resume work?"}`, "Idempotency-Key", "k1")
	if st != 202 || json.Unmarshal(b, &again) != nil {
		t.Fatalf("retry: got %d %s", st, b)
	}
	if again.Turn.ID != first.Turn.ID {
		t.Errorf("retry with the same key: got turn %s, want %s", again.Turn.ID, first.Turn.ID)
	}
	st, _, b = c.do("POST", path, `{"content":"another"}`)
	if st != 409 || !strings.Contains(string(b), `"conflict"`) {
		t.Errorf("second active turn: got %d %s, want 409 conflict", st, b)
	}
	st, _, _ = c.do("DELETE", "/api/conversations/"+conv, "")
	if st != 409 {
		t.Errorf("deleting a conversation with an active turn: got %d, want 409", st)
	}
	evs := c.allEvents(first.Turn.ID, -1)
	if last := evs[len(evs)-1]; last.Type != toolmark.EventTurnCompleted {
		t.Fatalf("turn ended with %s", last.Type)
	}
}
