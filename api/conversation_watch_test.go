package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// TestConversationWatch: a conversation's watch stream announces the turn
// being answered when it opens, then each turn started in the
// conversation, and nothing of other conversations; another user's
// conversation is not found.
func TestConversationWatch(t *testing.T) {
	_, alice, bob := tokenServerWith(t, testserver.Options{DemoDelay: 20 * time.Millisecond})
	conv, other := alice.newConversation(), alice.newConversation()
	running := alice.postTurn(conv, "Research how cancellation works; what happens after a crash?")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, alice.base+"/api/conversations/"+conv+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+alice.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("watch: %v %v", resp, err)
	}
	defer resp.Body.Close()
	events := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var e struct{ ConversationID, TurnID string }
				if json.Unmarshal([]byte(d), &e) == nil && e.ConversationID == conv {
					events <- e.TurnID
				}
			}
		}
		close(events)
	}()
	next := func(when string) string {
		select {
		case id := <-events:
			return id
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no turn event", when)
			return ""
		}
	}
	if got := next("on opening"); got != running.ID {
		t.Errorf("on opening: turn %s, want the running %s", got, running.ID)
	}
	alice.mustJSON("POST", "/api/turns/"+running.ID+"/cancel", "", 202, nil)
	alice.postTurn(other, "What is a lease?")
	var second string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if st, _, b := alice.do("POST", "/api/conversations/"+conv+"/turns", `{"content":"What is a lease?"}`); st == 202 {
			var out struct{ Turn struct{ ID string } }
			_ = json.Unmarshal(b, &out)
			second = out.Turn.ID
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cancelled turn did not end")
		}
	}
	if got := next("a turn started"); got != second {
		t.Errorf("a turn started: %s, want %s (the other conversation's turn must not show)", got, second)
	}
	if st, _, _ := bob.do("GET", "/api/conversations/"+conv+"/events", ""); st != 404 {
		t.Errorf("another user's watch: %d, want 404", st)
	}
}
