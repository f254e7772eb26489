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
	next := watchTurns(t, alice, conv)
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

// TestConversationWatchAcrossReplicas: a turn started on one replica
// reaches a watcher of its conversation on another (ChannelTurns), and a
// watcher of another conversation hears nothing of it.
func TestConversationWatchAcrossReplicas(t *testing.T) {
	a := testserver.Start(t, testserver.Options{DemoDelay: 10 * time.Millisecond})
	b := testserver.Start(t, testserver.Options{DemoDelay: 10 * time.Millisecond, DB: a.DB})
	ca, cb := newClient(t, a.URL, ""), newClient(t, b.URL, "")
	conv, other := ca.newConversation(), ca.newConversation()
	onB, otherOnB := openWatch(t, cb, conv), openWatch(t, cb, other)
	// b hears of a's turns once a knows b is there (b's join, or a's next look).
	posted := map[string]bool{}
	for deadline, heard := time.Now().Add(20*time.Second), false; !heard; {
		started := ca.postTurn(conv, "What is a lease?")
		posted[started.ID] = true
		ca.allEvents(started.ID, -1)
		select {
		case got := <-onB.turns:
			if !posted[got] {
				t.Fatalf("watcher on b: turn %s, not one started on a", got)
			}
			heard = true
		case <-time.After(2 * time.Second):
			if time.Now().After(deadline) {
				t.Fatal("a turn started on replica a never reached the watcher on replica b")
			}
		}
	}
	select {
	case got := <-otherOnB.turns:
		t.Errorf("the other conversation's watcher heard turn %s", got)
	default:
	}
}

// watch is an open watch stream of one conversation: turns gets the id of
// each turn it announces.
type watch struct{ turns chan string }

// watchTurns opens conversation conv's watch stream as c and returns a
// function that waits (10 s at most) for the next turn it announces; the
// stream closes with the test.
func watchTurns(t *testing.T, c *client, conv string) func(when string) string {
	t.Helper()
	w := openWatch(t, c, conv)
	return func(when string) string {
		select {
		case id := <-w.turns:
			return id
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no turn event", when)
			return ""
		}
	}
}

func openWatch(t *testing.T, c *client, conv string) watch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/api/conversations/"+conv+"/events", nil)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("watch: %v %v", resp, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	w := watch{turns: make(chan string, 8)}
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var e struct{ ConversationID, TurnID string }
				if json.Unmarshal([]byte(d), &e) == nil && e.ConversationID == conv {
					w.turns <- e.TurnID
				}
			}
		}
		close(w.turns)
	}()
	return w
}
