package api_test

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/testserver"
	"github.com/toolmark/toolmark/liveview"
)

// renderFrame is the payload of a render frame.
type renderFrame struct {
	Seq    int64                 `json:"seq"`
	Reset  bool                  `json:"reset"`
	Count  int                   `json:"count"`
	Blocks []liveview.Block      `json:"blocks"`
	Status string                `json:"status"`
	Todos  []toolmark.Todo       `json:"todos"`
	Turn   *toolmark.TurnEndData `json:"turn"`
	Final  bool                  `json:"final"`
}

// liveView is what a client following with ?render=html puts together.
type liveView struct {
	blocks   []string
	frames   []renderFrame
	statuses []string
	todos    []toolmark.Todo
}

func (v *liveView) apply(tb testing.TB, f frame) {
	tb.Helper()
	if f.Event != "render" {
		if f.Data != "" {
			tb.Fatalf("a rendering stream carries a %s event: %s", f.Event, f.Data)
		}
		return
	}
	var rf renderFrame
	if err := json.Unmarshal([]byte(f.Data), &rf); err != nil {
		tb.Fatalf("render frame %q: %v", f.Data, err)
	}
	if f.ID != itoa(rf.Seq) {
		tb.Fatalf("a render frame of seq %d has id %q: Last-Event-ID would not resume from it", rf.Seq, f.ID)
	}
	if len(v.frames) == 0 && !rf.Reset {
		tb.Fatalf("the first render frame is not a reset: %s", f.Data)
	}
	if n := len(v.frames); n > 0 && rf.Seq < v.frames[n-1].Seq {
		tb.Fatalf("render frame of seq %d after one of %d", rf.Seq, v.frames[n-1].Seq)
	}
	if rf.Todos != nil {
		v.todos = rf.Todos
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
		v.blocks[b.Index] = b.Apply(v.blocks[b.Index])
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
				if last := v.frames[len(v.frames)-1]; !last.Final || last.Status != "" || last.Turn == nil || last.Turn.Status != toolmark.TurnCompleted {
					t.Errorf("follower %d: last frame %+v, want final with no status and the turn's end", i, last)
				}
			}
			v := views[0]
			if strings.Join(v.statuses, "") == "" {
				t.Errorf("no status among %q", v.statuses)
			}
			if strings.Contains(q, " and ") && (len(v.todos) == 0 || v.todos[0].Status != toolmark.TodoDone) {
				t.Errorf("the plan is missing or unfinished in the frames: %+v", v.todos)
			}
			// A frame at most per renderInterval (75 ms) while the answer
			// streams, and the final one at once.
			var events int
			for _, e := range c.allEvents(turn.ID, 0) {
				if e.Type == toolmark.EventTextDelta {
					events++
				}
			}
			if len(v.frames) >= events && events > 10 {
				t.Errorf("%d render frames for %d text events: not coalesced", len(v.frames), events)
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

// TestRenderedStreamResumesFinished: a rendering stream resumed at the last
// seq of a finished turn gets one reset frame with the whole answer and the
// turn's end, then the stream ends.
func TestRenderedStreamResumesFinished(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	c := newClient(t, srv.URL, "")
	conv := c.newConversation()
	turn := c.postTurn(conv, "How does resume work?")
	evs := c.allEvents(turn.ID, 0)
	last := evs[len(evs)-1].Seq
	v := followRendered(t, c, turn.ID, last)
	if len(v.frames) != 1 || !v.frames[0].Reset || !v.frames[0].Final || v.frames[0].Seq != last {
		t.Fatalf("frames %+v, want one final reset at seq %d", v.frames, last)
	}
	if got, want := v.html(), storedHTML(t, c, conv, turn.ID); got != want {
		t.Errorf("html %q, want %q", got, want)
	}
}

// rawEncodingTurn starts a server at the demo's pace delay, a turn on
// question in a new conversation, and an HTTP client that leaves
// Accept-Encoding, and the bodies, to the test.
func rawEncodingTurn(t *testing.T, delay time.Duration, question string) (*testserver.Server, string, toolmark.Turn, *http.Client) {
	t.Helper()
	srv := testserver.Start(t, testserver.Options{DemoDelay: delay})
	c := newClient(t, srv.URL, "")
	conv := c.newConversation()
	turn := c.postTurn(conv, question)
	return srv, conv, turn, &http.Client{Transport: &http.Transport{DisableCompression: true}}
}

// TestCompressedStream: a client that accepts gzip gets the event stream
// and JSON answers compressed, and the stream's frames arrive while the
// turn runs (each is flushed compressed), not at its end.
func TestCompressedStream(t *testing.T) {
	srv, conv, turn, hc := rawEncodingTurn(t, 20*time.Millisecond, "How does resume work, and what happens on cancellation?")
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/turns/"+turn.ID+"/events?render=html", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got := resp.Header.Get("Content-Encoding"); got != "gzip" {
		t.Fatalf("Content-Encoding %q, want gzip", got)
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var first *renderFrame
	if _, err := readFrames(zr, func(f frame) bool {
		if f.Event == "render" {
			var rf renderFrame
			_ = json.Unmarshal([]byte(f.Data), &rf)
			first = &rf
			return false
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if first == nil || first.Final {
		t.Fatalf("first frame %+v: want one while the turn runs", first)
	}
	req, _ = http.NewRequest(http.MethodGet, srv.URL+"/api/conversations/"+conv, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp2, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	if got := resp2.Header.Get("Content-Encoding"); got != "gzip" || !strings.Contains(resp2.Header.Get("Vary"), "Accept-Encoding") {
		t.Errorf("conversation: Content-Encoding %q, Vary %q", got, resp2.Header.Get("Vary"))
	}
}

// TestRefusedEncoding: a coding refused with q=0 is not used, neither for
// JSON answers nor for event streams (taken over or not).
func TestRefusedEncoding(t *testing.T) {
	srv, conv, turn, hc := rawEncodingTurn(t, 5*time.Millisecond, "How does resume work?")
	for _, tc := range []struct{ path, accept, want string }{
		{"/api/conversations/" + conv, "gzip;q=0", ""},
		{"/api/conversations/" + conv, "gzip;q=0, deflate", "deflate"},
		{"/api/conversations/" + conv, "deflate;q=0.000, gzip;q=0.5", "gzip"},
		{"/api/turns/" + turn.ID + "/events", "gzip;q=0", ""},
		{"/api/turns/" + turn.ID + "/events", "GZIP;Q=0, deflate;q=1", "deflate"},
		{"/api/turns/" + turn.ID + "/events", "deflate;q=0, gzip", "gzip"},
		{"/api/turns/" + turn.ID + "/events?render=html", "gzip;q=0", ""},
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+tc.path, nil)
		req.Header.Set("Accept-Encoding", tc.accept)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s, %q: %v", tc.path, tc.accept, err)
		}
		if got := resp.Header.Get("Content-Encoding"); got != tc.want || resp.StatusCode != http.StatusOK {
			t.Errorf("%s, Accept-Encoding %q: %d, Content-Encoding %q, want %q", tc.path, tc.accept, resp.StatusCode, got, tc.want)
		}
		if tc.want == "" && (len(body) == 0 || !utf8.Valid(body)) {
			t.Errorf("%s, Accept-Encoding %q: the body is not plain: %.80q", tc.path, tc.accept, body)
		}
	}
}
