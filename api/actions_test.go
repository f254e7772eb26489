package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// answered runs a turn in conv to its end and returns it.
func answered(t *testing.T, c *client, srvWait func(string) toolmark.Turn, conv, question string) toolmark.Turn {
	t.Helper()
	return srvWait(c.postTurn(conv, question).ID)
}

type convPage struct {
	Conversation toolmark.Conversation `json:"conversation"`
	Messages     []struct {
		toolmark.Message
		HTML string `json:"html"`
	} `json:"messages"`
}

// TestEverydayActions runs the everyday actions as scenarios against a
// real server: rename, search, regenerate, retry, edit (with the replaced
// answers kept), export, idempotent repeats, and another user's ids.
func TestEverydayActions(t *testing.T) {
	// A realistic pace, so that a turn is still running when it is stopped.
	srv, alice, bob := tokenServerWith(t, testserver.Options{DemoDelay: 5 * time.Millisecond})
	wait := func(id string) toolmark.Turn {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		tt, err := srv.App.Runner.Wait(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return tt
	}
	conv := alice.newConversation()
	first := answered(t, alice, wait, conv, "How does resume work?")
	page := func() convPage {
		var p convPage
		alice.mustJSON("GET", "/api/conversations/"+conv, "", 200, &p)
		return p
	}
	p := page()
	if len(p.Messages) != 2 {
		t.Fatalf("%d messages, want 2", len(p.Messages))
	}
	question, answer := p.Messages[0], p.Messages[1]

	t.Run("rename", func(t *testing.T) {
		var out struct{ Conversation toolmark.Conversation }
		alice.mustJSON("PATCH", "/api/conversations/"+conv, `{"title":"  Resume notes "}`, 200, &out)
		if out.Conversation.Title != "Resume notes" || page().Conversation.Title != "Resume notes" {
			t.Errorf("title %q", out.Conversation.Title)
		}
		for _, sc := range []struct {
			c      *client
			body   string
			status int
		}{{alice, `{"title":""}`, 400}, {alice, `{}`, 400}, {alice, `{"name":"x"}`, 400}, {bob, `{"title":"mine"}`, 404}} {
			if st, _, b := sc.c.do("PATCH", "/api/conversations/"+conv, sc.body); st != sc.status {
				t.Errorf("PATCH %s: %d %s, want %d", sc.body, st, b, sc.status)
			}
		}
	})

	t.Run("search", func(t *testing.T) {
		other := alice.newConversation()
		answered(t, alice, wait, other, "What is a lease?")
		var out struct {
			Conversations []toolmark.Conversation `json:"conversations"`
		}
		alice.mustJSON("GET", "/api/conversations?q=LAST-EVENT", "", 200, &out)
		if len(out.Conversations) != 1 || out.Conversations[0].ID != conv || !strings.Contains(strings.ToLower(out.Conversations[0].Snippet), "last-event") {
			t.Errorf("search for Last-Event: %+v", out.Conversations)
		}
		if strings.Contains(out.Conversations[0].Snippet, "<ToolCall") {
			t.Errorf("a snippet shows markup: %q", out.Conversations[0].Snippet)
		}
		if hit := out.Conversations[0].HitMessageID; hit != answer.ID {
			t.Errorf("the hit's message is %q, want the answer %q that holds the text", hit, answer.ID)
		}
		alice.mustJSON("GET", "/api/conversations?q=resume%20notes", "", 200, &out)
		if len(out.Conversations) != 1 || out.Conversations[0].ID != conv {
			t.Errorf("search by title: %+v", out.Conversations)
		}
		alice.mustJSON("GET", "/api/conversations?q=%25_%25", "", 200, &out)
		if len(out.Conversations) != 0 {
			t.Errorf("wildcards are text: %+v", out.Conversations)
		}
		bob.mustJSON("GET", "/api/conversations?q=resume", "", 200, &out)
		if len(out.Conversations) != 0 {
			t.Errorf("another user finds %+v", out.Conversations)
		}
		var pg struct {
			Conversations []toolmark.Conversation `json:"conversations"`
			Next          string                  `json:"next"`
		}
		alice.mustJSON("GET", "/api/conversations?limit=1", "", 200, &pg)
		if len(pg.Conversations) != 1 || pg.Next == "" {
			t.Fatalf("first page %+v", pg)
		}
		firstID := pg.Conversations[0].ID
		alice.mustJSON("GET", "/api/conversations?limit=1&after="+pg.Next, "", 200, &pg)
		if len(pg.Conversations) != 1 || pg.Conversations[0].ID == firstID {
			t.Errorf("second page %+v", pg)
		}
		if st, _, _ := alice.do("GET", "/api/conversations?after=garbage", ""); st != 400 {
			t.Errorf("a bad cursor: %d", st)
		}
	})

	var regenerated toolmark.Turn
	t.Run("regenerate", func(t *testing.T) {
		if st, _, b := alice.do("POST", "/api/turns/"+first.ID+"/retry", ""); st != 409 {
			t.Errorf("retry of a completed answer: %d %s, want 409", st, b)
		}
		var out struct{ Turn toolmark.Turn }
		alice.mustJSON("POST", "/api/turns/"+first.ID+"/regenerate", "", 202, &out)
		regenerated = wait(out.Turn.ID)
		p := page()
		if len(p.Messages) != 2 || p.Messages[0].Content != question.Content || p.Messages[1].ID == answer.ID || p.Messages[1].TurnID != regenerated.ID {
			t.Fatalf("after regenerate: %+v", p.Messages)
		}
		var old struct{ Messages []toolmark.Message }
		alice.mustJSON("GET", "/api/conversations/"+conv+"/replaced", "", 200, &old)
		if len(old.Messages) != 2 || old.Messages[1].ID != answer.ID || old.Messages[1].ReplacedBy != regenerated.ID {
			t.Errorf("the replaced answer is not reachable: %+v", old.Messages)
		}
		if st, _, _ := bob.do("POST", "/api/turns/"+regenerated.ID+"/regenerate", ""); st != 404 {
			t.Errorf("another user regenerates: %d", st)
		}
		if st, _, _ := alice.do("POST", "/api/turns/"+first.ID+"/regenerate", ""); st != 409 {
			t.Errorf("regenerating a replaced answer: %d, want 409", st)
		}
	})

	t.Run("retry a stopped answer, twice with one key", func(t *testing.T) {
		slow := alice.postTurn(conv, "Tell me about cancellation.")
		alice.mustJSON("POST", "/api/turns/"+slow.ID+"/cancel", "", 202, nil)
		if st := wait(slow.ID).Status; st != toolmark.TurnCancelled {
			t.Fatalf("the stopped turn ended %s", st)
		}
		key := []string{"Idempotency-Key", "retry-1"}
		var a, b struct{ Turn toolmark.Turn }
		st, _, body := alice.do("POST", "/api/turns/"+slow.ID+"/retry", "", key...)
		if st != 202 || json.Unmarshal(body, &a) != nil {
			t.Fatalf("retry: %d %s", st, body)
		}
		st, _, body = alice.do("POST", "/api/turns/"+slow.ID+"/retry", "", key...)
		if st != 202 || json.Unmarshal(body, &b) != nil || a.Turn.ID != b.Turn.ID {
			t.Errorf("a repeated retry made another turn: %s vs %s (%d %s)", a.Turn.ID, b.Turn.ID, st, body)
		}
		if got := wait(a.Turn.ID); got.Status != toolmark.TurnCompleted {
			t.Errorf("the retried turn ended %s", got.Status)
		}
	})

	t.Run("edit", func(t *testing.T) {
		p := page()
		q := p.Messages[len(p.Messages)-2]
		if st, _, _ := alice.do("POST", "/api/messages/"+p.Messages[len(p.Messages)-1].ID+"/edit", `{"content":"x"}`); st != 400 {
			t.Errorf("editing an answer: %d, want 400", st)
		}
		if st, _, _ := bob.do("POST", "/api/messages/"+q.ID+"/edit", `{"content":"x"}`); st != 404 {
			t.Errorf("another user edits: %d, want 404", st)
		}
		if st, _, _ := alice.do("POST", "/api/messages/"+q.ID+"/edit", `{"content":"  "}`); st != 400 {
			t.Errorf("an empty edit: %d, want 400", st)
		}
		var out struct{ Turn toolmark.Turn }
		alice.mustJSON("POST", "/api/messages/"+q.ID+"/edit", `{"content":"What happens on cancellation?"}`, 202, &out)
		wait(out.Turn.ID)
		p2 := page()
		last := p2.Messages[len(p2.Messages)-2]
		if last.Content != "What happens on cancellation?" || len(p2.Messages) != len(p.Messages) {
			t.Errorf("after the edit: %d messages, last question %q", len(p2.Messages), last.Content)
		}
		// The model saw the conversation without the replaced turns.
		tc, err := srv.DB.TurnContext(context.Background(), conv, out.Turn.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range tc.History {
			if h.UserText == q.Content {
				t.Errorf("the model's history holds the replaced question %q", q.Content)
			}
		}
		if len(tc.History) != 1 {
			t.Errorf("history of %d turns, want the one regenerated turn", len(tc.History))
		}
	})

	t.Run("export", func(t *testing.T) {
		st, h, md := alice.do("GET", "/api/conversations/"+conv+"/export", "")
		if st != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/markdown") || !strings.Contains(h.Get("Content-Disposition"), `filename="resume-notes.md"`) {
			t.Fatalf("markdown export: %d %v", st, h)
		}
		text := string(md)
		if !strings.HasPrefix(text, "# Resume notes\n") || !strings.Contains(text, "## You — ") || !strings.Contains(text, "## Assistant — ") ||
			strings.Contains(text, "<ToolCall") || !strings.Contains(text, "\n- ✓ ") {
			t.Errorf("markdown export:\n%s", text)
		}
		var js struct {
			Conversation toolmark.Conversation
			Messages     []struct {
				toolmark.Message
				ToolCalls []toolmark.ToolCallRecord `json:"toolCalls"`
			}
		}
		alice.mustJSON("GET", "/api/conversations/"+conv+"/export?format=json", "", 200, &js)
		if js.Conversation.ID != conv || len(js.Messages) != len(page().Messages) || len(js.Messages[1].ToolCalls) == 0 {
			t.Errorf("json export: %d messages", len(js.Messages))
		}
		for _, sc := range []struct {
			c      *client
			path   string
			status int
		}{{alice, "/export?format=pdf", 400}, {bob, "/export", 404}, {bob, "/replaced", 404}} {
			if st, _, _ := sc.c.do("GET", "/api/conversations/"+conv+sc.path, ""); st != sc.status {
				t.Errorf("GET %s: %d, want %d", sc.path, st, sc.status)
			}
		}
	})
}
