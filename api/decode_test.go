package api_test

import (
	"encoding/json"
	"testing"
)

// TestNullBody checks that every route that reads a JSON object answers
// null (alone or with whitespace) with 400 invalid, never as if it were {},
// and that nothing is created by it.
func TestNullBody(t *testing.T) {
	srv, alice, _ := tokenServer(t)
	conv := alice.newConversation()
	anon := newClient(t, srv.URL, "")
	routes := []struct {
		name string
		c    *client
		path string
	}{
		{"create conversation", alice, "/api/conversations"},
		{"post turn", alice, "/api/conversations/" + conv + "/turns"},
		{"chat", alice, "/api/chat"},
		{"session", anon, "/api/session"},
	}
	for _, r := range routes {
		for _, body := range []string{"null", " null\n", "\tnull ", "null null", "null {}"} {
			t.Run(r.name+"/"+body, func(t *testing.T) {
				st, _, b := r.c.do("POST", r.path, body)
				var e struct {
					Error struct{ Code, Message string } `json:"error"`
				}
				if err := json.Unmarshal(b, &e); err != nil {
					t.Fatalf("body %q: %v", b, err)
				}
				if st != 400 || e.Error.Code != "invalid" {
					t.Errorf("got %d %q, want 400 invalid", st, e.Error.Code)
				}
				if e.Error.Message == "" {
					t.Errorf("no message")
				}
			})
		}
	}
	// Nothing was created: alice still has one conversation, with no turn.
	var list struct {
		Conversations []struct{ ID string } `json:"conversations"`
	}
	alice.mustJSON("GET", "/api/conversations", "", 200, &list)
	if len(list.Conversations) != 1 {
		t.Errorf("got %d conversations after null bodies, want 1", len(list.Conversations))
	}
	var got struct {
		Messages []json.RawMessage `json:"messages"`
	}
	alice.mustJSON("GET", "/api/conversations/"+conv, "", 200, &got)
	if len(got.Messages) != 0 {
		t.Errorf("got %d messages after null bodies, want 0", len(got.Messages))
	}
}
