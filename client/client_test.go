package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolmark/toolmark"
)

// recorder answers every request with a fixed status and body and keeps
// the last request.
type recorder struct {
	status  int
	ctype   string
	body    string
	req     *http.Request
	reqBody string
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rec.req, rec.reqBody = r, string(b)
	if rec.ctype != "" {
		w.Header().Set("Content-Type", rec.ctype)
	}
	w.WriteHeader(rec.status)
	io.WriteString(w, rec.body)
}

func TestCalls(t *testing.T) {
	tests := []struct {
		name       string
		call       func(c *Client) error
		status     int
		body       string
		wantMethod string
		wantPath   string
		wantBody   string
		wantHeader map[string]string
	}{
		{"info", func(c *Client) error {
			info, err := c.Info(context.Background())
			if err == nil && (!info.Demo || info.Model != "demo") {
				t.Errorf("got %+v", info)
			}
			return err
		}, 200, `{"model":"demo","demo":true,"auth":"local","version":"dev"}`, "GET", "/api/info", "", nil},
		{"create conversation", func(c *Client) error {
			conv, err := c.CreateConversation(context.Background(), "Rust")
			if err == nil && conv.ID != "c1" {
				t.Errorf("got %+v", conv)
			}
			return err
		}, 201, `{"conversation":{"id":"c1","title":"Rust"}}`, "POST", "/api/conversations", `{"title":"Rust"}`, map[string]string{"Content-Type": "application/json"}},
		{"create conversation without title", func(c *Client) error {
			_, err := c.CreateConversation(context.Background(), "")
			return err
		}, 201, `{"conversation":{"id":"c1"}}`, "POST", "/api/conversations", `{}`, nil},
		{"list", func(c *Client) error {
			convs, err := c.ListConversations(context.Background())
			if err == nil && len(convs) != 2 {
				t.Errorf("got %d", len(convs))
			}
			return err
		}, 200, `{"conversations":[{"id":"a"},{"id":"b"}]}`, "GET", "/api/conversations", "", nil},
		{"get conversation", func(c *Client) error {
			conv, err := c.GetConversation(context.Background(), "a/b")
			if err == nil && (len(conv.Messages) != 1 || conv.Messages[0].HTML != "<p>x</p>" || conv.Messages[0].Role != toolmark.RoleAssistant || conv.ActiveTurn == nil) {
				t.Errorf("got %+v", conv)
			}
			return err
		}, 200, `{"conversation":{"id":"a"},"messages":[{"id":"m","role":"assistant","content":"x","html":"<p>x</p>","status":"complete","todos":[]}],"activeTurn":{"id":"t","status":"running"}}`,
			"GET", "/api/conversations/a%2Fb", "", nil},
		{"delete", func(c *Client) error { return c.DeleteConversation(context.Background(), "a") }, 204, "", "DELETE", "/api/conversations/a", "", nil},
		{"delete upload", func(c *Client) error { return c.DeleteUpload(context.Background(), "u/1") }, 204, "", "DELETE", "/api/uploads/u%2F1", "", nil},
		{"delete an attached upload", func(c *Client) error {
			err := c.DeleteUpload(context.Background(), "u1")
			if ErrorCode(err) != toolmark.ECONFLICT {
				t.Errorf("got %v, want ECONFLICT", err)
			}
			return nil
		}, 409, `{"error":{"code":"conflict","message":"file \"a.png\" is attached to 1 question(s)"}}`, "DELETE", "/api/uploads/u1", "", nil},
		{"post turn", func(c *Client) error {
			ti, err := c.PostTurn(context.Background(), "a", "hi", "key-1")
			if err == nil && (ti.Turn.ID != "t" || ti.EventsURL != "/api/turns/t/events" || ti.Turn.LastSeq != 1) {
				t.Errorf("got %+v", ti)
			}
			return err
		}, 202, `{"turn":{"id":"t","status":"queued","seq":1},"eventsUrl":"/api/turns/t/events"}`, "POST", "/api/conversations/a/turns", `{"content":"hi"}`,
			map[string]string{"Idempotency-Key": "key-1", "Authorization": "Bearer tok"}},
		{"get turn", func(c *Client) error {
			st, err := c.GetTurn(context.Background(), "t")
			if err == nil && (st.Seq != 9 || st.Content != "x") {
				t.Errorf("got %+v", st)
			}
			return err
		}, 200, `{"turn":{"id":"t"},"content":"x","html":"","seq":9,"toolCalls":[],"todos":[]}`, "GET", "/api/turns/t", "", nil},
		{"cancel", func(c *Client) error {
			turn, err := c.CancelTurn(context.Background(), "t")
			if err == nil && turn.Status != toolmark.TurnCancelled {
				t.Errorf("got %+v", turn)
			}
			return err
		}, 202, `{"turn":{"id":"t","status":"cancelled"}}`, "POST", "/api/turns/t/cancel", `{}`, nil},
		{"chat", func(c *Client) error {
			res, err := c.Chat(context.Background(), "a", "hi")
			if err == nil && (res.ConversationID != "a" || res.Message.HTML != "<p>ok</p>") {
				t.Errorf("got %+v", res)
			}
			return err
		}, 200, `{"conversationId":"a","turn":{"id":"t"},"message":{"id":"m","html":"<p>ok</p>"}}`, "POST", "/api/chat", `{"content":"hi","conversationId":"a"}`, nil},
		{"rename", func(c *Client) error {
			conv, err := c.RenameConversation(context.Background(), "c1", "Notes")
			if err == nil && conv.Title != "Notes" {
				t.Errorf("got %+v", conv)
			}
			return err
		}, 200, `{"conversation":{"id":"c1","title":"Notes"}}`, "PATCH", "/api/conversations/c1", `{"title":"Notes"}`, nil},
		{"search", func(c *Client) error {
			l, err := c.ListConversationsPage(context.Background(), "last event", "cur", 10)
			if err == nil && (len(l.Conversations) != 1 || l.Next != "n2") {
				t.Errorf("got %+v", l)
			}
			return err
		}, 200, `{"conversations":[{"id":"c1","snippet":"…"}],"next":"n2"}`, "GET", "/api/conversations", "", nil},
		{"retry", func(c *Client) error {
			ti, err := c.RetryTurn(context.Background(), "t1", "k1")
			if err == nil && ti.Turn.ID != "t2" {
				t.Errorf("got %+v", ti)
			}
			return err
		}, 202, `{"turn":{"id":"t2"},"eventsUrl":"/api/turns/t2/events"}`, "POST", "/api/turns/t1/retry", `{}`, map[string]string{"Idempotency-Key": "k1"}},
		{"regenerate", func(c *Client) error {
			_, err := c.RegenerateTurn(context.Background(), "t1", "")
			return err
		}, 202, `{"turn":{"id":"t2"}}`, "POST", "/api/turns/t1/regenerate", `{}`, nil},
		{"retry on a model", func(c *Client) error {
			_, err := c.RetryTurnOn(context.Background(), "t1", "claude", "")
			return err
		}, 202, `{"turn":{"id":"t2","model":"claude"}}`, "POST", "/api/turns/t1/retry", `{"model":"claude"}`, nil},
		{"regenerate on a model", func(c *Client) error {
			_, err := c.RegenerateTurnOn(context.Background(), "t1", "gpt", "")
			return err
		}, 202, `{"turn":{"id":"t2","model":"gpt"}}`, "POST", "/api/turns/t1/regenerate", `{"model":"gpt"}`, nil},
		{"edit", func(c *Client) error {
			_, err := c.EditMessage(context.Background(), "m1", "What is a lease?", "")
			return err
		}, 202, `{"turn":{"id":"t2"}}`, "POST", "/api/messages/m1/edit", `{"content":"What is a lease?"}`, nil},
		{"export", func(c *Client) error {
			b, _, err := c.ExportConversation(context.Background(), "c1", "markdown")
			if err == nil && string(b) != `{"x":1}` {
				t.Errorf("got %q", b)
			}
			return err
		}, 200, `{"x":1}`, "GET", "/api/conversations/c1/export", "", nil},
		{"older messages", func(c *Client) error {
			cv, err := c.GetConversationBefore(context.Background(), "c1", 40, 20)
			if err == nil && (!cv.More || cv.Before != 20) {
				t.Errorf("got %+v", cv)
			}
			return err
		}, 200, `{"conversation":{"id":"c1"},"messages":[],"more":true,"before":20}`, "GET", "/api/conversations/c1", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{status: tt.status, ctype: "application/json", body: tt.body}
			srv := httptest.NewServer(rec)
			defer srv.Close()
			if err := tt.call(New(srv.URL+"/", WithToken("tok"))); err != nil {
				t.Fatal(err)
			}
			if rec.req.Method != tt.wantMethod || rec.req.URL.EscapedPath() != tt.wantPath {
				t.Errorf("got %s %s, want %s %s", rec.req.Method, rec.req.URL.EscapedPath(), tt.wantMethod, tt.wantPath)
			}
			if tt.wantBody != "" && !jsonEqual(rec.reqBody, tt.wantBody) {
				t.Errorf("body %s, want %s", rec.reqBody, tt.wantBody)
			}
			for k, v := range tt.wantHeader {
				if got := rec.req.Header.Get(k); got != v {
					t.Errorf("header %s: got %q, want %q", k, got, v)
				}
			}
		})
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func TestAPIError(t *testing.T) {
	tests := []struct {
		name              string
		status            int
		ctype, body       string
		wantCode, wantMsg string
	}{
		{"json body", 409, "application/json", `{"error":{"code":"conflict","message":"a turn is active"}}`, toolmark.ECONFLICT, "a turn is active"},
		{"proxy page", 502, "text/html", `<html>bad gateway</html>`, toolmark.EUNAVAILABLE, "<html>bad gateway</html>"},
		{"empty 404", 404, "", ``, toolmark.ENOTFOUND, "Not Found"},
		{"empty 401", 401, "", ``, toolmark.EUNAUTHORIZED, "Unauthorized"},
		{"other 4xx", 422, "", `nope`, toolmark.EINVALID, "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(&recorder{status: tt.status, ctype: tt.ctype, body: tt.body})
			defer srv.Close()
			_, err := New(srv.URL).Info(context.Background())
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("got %v, want an *APIError", err)
			}
			if apiErr.Status != tt.status || apiErr.Code != tt.wantCode || apiErr.Message != tt.wantMsg {
				t.Errorf("got %+v, want %d %s %q", apiErr, tt.status, tt.wantCode, tt.wantMsg)
			}
			if ErrorCode(err) != tt.wantCode {
				t.Errorf("ErrorCode: got %q", ErrorCode(err))
			}
		})
	}
}
