package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/testserver"
)

// renderFrame is the payload of a render frame.
type renderFrame struct {
	Seq    int64 `json:"seq"`
	Reset  bool  `json:"reset"`
	Count  int   `json:"count"`
	Blocks []struct {
		I    int    `json:"i"`
		HTML string `json:"html"`
	} `json:"blocks"`
	Status string `json:"status"`
	Final  bool   `json:"final"`
}

// liveView is what a client following with ?render=html puts together.
type liveView struct {
	blocks   []string
	frames   []renderFrame
	events   []toolmark.Event
	statuses []string
}

func (v *liveView) apply(tb testing.TB, f frame) {
	tb.Helper()
	if f.Event != "render" {
		if f.Data != "" {
			v.events = append(v.events, mustEvent(tb, f))
		}
		return
	}
	if f.ID != "" {
		tb.Fatalf("a render frame has id %q: it would move Last-Event-ID", f.ID)
	}
	var rf renderFrame
	if err := json.Unmarshal([]byte(f.Data), &rf); err != nil {
		tb.Fatalf("render frame %q: %v", f.Data, err)
	}
	if len(v.frames) == 0 && !rf.Reset {
		tb.Fatalf("the first render frame is not a reset: %s", f.Data)
	}
	if n := len(v.events); n > 0 && rf.Seq < v.events[n-1].Seq {
		tb.Fatalf("render frame of seq %d after event %d", rf.Seq, v.events[n-1].Seq)
	}
	v.frames = append(v.frames, rf)
	if rf.Reset {
		v.blocks = nil
	}
	for len(v.blocks) < rf.Count {
		v.blocks = append(v.blocks, "")
	}
	v.blocks = v.blocks[:rf.Count]
	for _, b := range rf.Blocks {
		v.blocks[b.I] = b.HTML
	}
	if s := rf.Status; len(v.statuses) == 0 || v.statuses[len(v.statuses)-1] != s {
		v.statuses = append(v.statuses, s)
	}
}

func (v *liveView) html() string { return strings.Join(v.blocks, "") }

// followRendered follows a turn with ?render=html from a cursor (-1: none)
// to its end.
func followRendered(t *testing.T, c *client, turnID string, after int64) *liveView {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/api/turns/"+turnID+"/events?render=html", nil)
	if after >= 0 {
		req.Header.Set("Last-Event-ID", itoa(after))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("got status %d", resp.StatusCode)
	}
	v := &liveView{}
	if _, err := readFrames(resp.Body, func(f frame) bool {
		v.apply(t, f)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return v
}

// storedHTML returns the html of a turn's stored answer.
func storedHTML(t *testing.T, c *client, convID, turnID string) string {
	t.Helper()
	var out struct {
		Messages []struct {
			Role   string `json:"role"`
			TurnID string `json:"turnId"`
			HTML   string `json:"html"`
		} `json:"messages"`
	}
	c.mustJSON(http.MethodGet, "/api/conversations/"+convID, "", http.StatusOK, &out)
	for _, m := range out.Messages {
		if m.Role == "assistant" && m.TurnID == turnID {
			return m.HTML
		}
	}
	t.Fatalf("no answer of turn %s", turnID)
	return ""
}

// TestRenderedStream: demo turns followed with ?render=html by several
// clients at once — from the start, and resuming mid-turn — end with live
// HTML equal to the stored message's html, the status bubble showing the
// tools' status texts and nothing once the turn has ended.
func TestRenderedStream(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 2 * time.Millisecond})
	c := newClient(t, srv.URL, "")
	for _, q := range []string{
		"How does resume work, and what happens on cancellation?",
		"Research how crash recovery works",
		"What does https://127.0.0.1:1/nothing say about resume?",
	} {
		t.Run(q, func(t *testing.T) {
			conv := c.newConversation()
			turn := c.postTurn(conv, q)
			views := make([]*liveView, 4)
			var wg sync.WaitGroup
			for i := range views {
				wg.Add(1)
				go func() {
					defer wg.Done()
					after := int64(-1)
					if i == 3 {
						time.Sleep(30 * time.Millisecond)
						after = 5 // a client resuming mid-turn
					}
					views[i] = followRendered(t, c, turn.ID, after)
				}()
			}
			wg.Wait()
			want := storedHTML(t, c, conv, turn.ID)
			for i, v := range views {
				if len(v.frames) == 0 {
					t.Fatalf("follower %d got no render frame", i)
				}
				if got := v.html(); got != want {
					t.Errorf("follower %d: live HTML differs from the stored html\nlive:   %q\nstored: %q", i, got, want)
				}
				if last := v.frames[len(v.frames)-1]; !last.Final || last.Status != "" {
					t.Errorf("follower %d: last frame %+v, want final with no status", i, last)
				}
			}
			v := views[0]
			if strings.Join(v.statuses, "") == "" {
				t.Errorf("no status among %q", v.statuses)
			}
		})
	}
}

func TestRenderedStreamBadParameter(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	c := newClient(t, srv.URL, "")
	turn := c.postTurn(c.newConversation(), "hello")
	st, _, body := c.do(http.MethodGet, "/api/turns/"+turn.ID+"/events?render=pdf", "")
	if st != http.StatusBadRequest || !strings.Contains(string(body), "render") {
		t.Errorf("got %d %s, want 400 naming render", st, body)
	}
}
