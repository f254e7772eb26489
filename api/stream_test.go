package api_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/testserver"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// twoToolQuestion makes the demo model plan a todo list and a search: two
// tools in one turn.
const twoToolQuestion = "How does resume work, and what happens on cancellation?"

// summarize describes an event stream line by line for the golden file:
// seq, type and, for tool calls, the id and status.
func summarize(evs []toolmark.Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%d %s", e.Seq, e.Type)
		switch {
		case strings.HasPrefix(string(e.Type), "tool_call_"):
			var d toolmark.ToolCallData
			_ = json.Unmarshal(e.Data, &d)
			fmt.Fprintf(&b, " %s %s %s", d.ToolCallID, d.Name, d.Status)
			if d.ParentID != "" {
				fmt.Fprintf(&b, " parent=%s", d.ParentID)
			}
		case e.Type == toolmark.EventTodoUpdate:
			var d toolmark.TodoUpdateData
			_ = json.Unmarshal(e.Data, &d)
			fmt.Fprintf(&b, " %d todos", len(d.Todos))
		case e.Type == toolmark.EventTurnCompleted || e.Type == toolmark.EventTurnFailed || e.Type == toolmark.EventTurnCancelled:
			var d toolmark.TurnEndData
			_ = json.Unmarshal(e.Data, &d)
			fmt.Fprintf(&b, " %s", d.Status)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// checkStream checks the invariants of a complete stream: seq 1..N without
// gaps, one terminal event at the end, exactly one final event per tool
// call, and the events rebuild the stored content exactly.
func checkStream(t *testing.T, srv *testserver.Server, evs []toolmark.Event) {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	finals := map[string]int{}
	started := map[string]bool{}
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
		if e.Type.Terminal() != (i == len(evs)-1) {
			t.Fatalf("event %d (%s): terminal events must come last and only last", e.Seq, e.Type)
		}
		if strings.HasPrefix(string(e.Type), "tool_call_") {
			var d toolmark.ToolCallData
			if err := json.Unmarshal(e.Data, &d); err != nil || d.ToolCallID == "" || d.Markup == "" {
				t.Fatalf("event %d: bad tool call data %s", e.Seq, e.Data)
			}
			if e.Type == toolmark.EventToolCallStarted {
				started[d.ToolCallID] = true
			}
			if e.Type == toolmark.EventToolCallSuccess || e.Type == toolmark.EventToolCallError {
				finals[d.ToolCallID]++
			}
		}
	}
	for id := range started {
		if finals[id] != 1 {
			t.Errorf("tool call %s has %d final events, want 1", id, finals[id])
		}
	}
	content, seq, err := srv.DB.Snapshot(context.Background(), evs[0].TurnID)
	if err != nil {
		t.Fatal(err)
	}
	if seq != evs[len(evs)-1].Seq {
		t.Errorf("stored content reflects seq %d, want %d", seq, evs[len(evs)-1].Seq)
	}
	rebuilt, err := replayLog(evs)
	if err != nil {
		t.Fatal(err)
	}
	if rebuilt != content {
		t.Errorf("events rebuild\n%q\nbut the stored content is\n%q", rebuilt, content)
	}
	for _, c := range toolcallmarkup.Parse(content) {
		if !c.Status.Final() {
			t.Errorf("stored tag %s is %s", c.ID, c.Status)
		}
	}
}

// TestDemoTurnEventSequence checks the exact event sequence of a demo turn
// with two tools against a golden file.
func TestDemoTurnEventSequence(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	c := newClient(t, srv.URL, "")
	turn := c.postTurn(c.newConversation(), twoToolQuestion)
	evs := c.allEvents(turn.ID, -1)
	checkStream(t, srv, evs)
	// The golden file keeps the structure: the turn-level events in order,
	// then each tool call's own sequence. Text and argument deltas depend
	// on chunking, and parallel tools finish in any order.
	var lines []string
	perCall := map[string][]string{}
	var ids []string
	for _, l := range strings.Split(summarize(evs), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || f[1] == "text_delta" || f[1] == "tool_call_delta" {
			continue
		}
		if strings.HasPrefix(f[1], "tool_call_") {
			if _, ok := perCall[f[2]]; !ok {
				ids = append(ids, f[2])
			}
			perCall[f[2]] = append(perCall[f[2]], strings.Join(append([]string{f[1]}, f[3:]...), " "))
			continue
		}
		lines = append(lines, strings.Join(f[1:], " "))
	}
	sort.Strings(ids)
	for _, id := range ids {
		lines = append(lines, id+": "+strings.Join(perCall[id], " → "))
	}
	structure := strings.Join(lines, "\n") + "\n"
	path := filepath.Join("testdata", "demo_turn.golden")
	if *update {
		if err := os.WriteFile(path, []byte(structure), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestDemoTurnEventSequence -update ./api/)", err)
	}
	if structure != string(want) {
		t.Errorf("event structure differs from %s:\ngot:\n%s\nwant:\n%s", path, structure, want)
	}
	if tools := len(ids); tools < 2 {
		t.Errorf("the demo turn used %d tools, want at least 2", tools)
	}
}

// TestResumeAfterDisconnect drops the stream after a random event and
// resumes with Last-Event-ID, 200 times: the two parts together must be the
// uninterrupted stream, with no duplicate and no gap.
func TestResumeAfterDisconnect(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	c := newClient(t, srv.URL, "")
	turn := c.postTurn(c.newConversation(), twoToolQuestion)
	full := c.allEvents(turn.ID, -1)
	checkStream(t, srv, full)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		cut := rng.IntN(len(full)) // events read before the drop
		ctx, cancel := context.WithCancel(context.Background())
		resp := c.stream(ctx, turn.ID, -1)
		var got []toolmark.Event
		_, _ = readFrames(resp.Body, func(f frame) bool {
			if f.Data == "" {
				return true
			}
			got = append(got, mustEvent(t, f))
			return len(got) < cut
		})
		cancel() // the network drops
		resp.Body.Close()
		last := int64(0)
		if len(got) > 0 {
			last = got[len(got)-1].Seq
		}
		if i%2 == 0 {
			got = append(got, c.allEvents(turn.ID, last)...)
		} else { // the ?after= form
			var rest []toolmark.Event
			st, _, b := c.do("GET", fmt.Sprintf("/api/turns/%s/events?after=%d", turn.ID, last), "")
			if st != 200 {
				t.Fatalf("resume with ?after: %d", st)
			}
			_, _ = readFrames(strings.NewReader(string(b)), func(f frame) bool {
				if f.Data != "" {
					rest = append(rest, mustEvent(t, f))
				}
				return true
			})
			got = append(got, rest...)
		}
		if !eventsEqual(got, full) {
			t.Fatalf("iteration %d (cut after %d): resumed stream differs (%d events, want %d)", i, cut, len(got), len(full))
		}
	}
}

// TestResumeLive drops and resumes a stream while its turn runs.
func TestResumeLive(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 3 * time.Millisecond})
	c := newClient(t, srv.URL, "")
	for round := range 3 {
		turn := c.postTurn(c.newConversation(), twoToolQuestion)
		rng := rand.New(rand.NewPCG(uint64(round), 7))
		var got []toolmark.Event
		last, drops := int64(-1), 0
		for done := false; !done; {
			ctx, cancel := context.WithCancel(context.Background())
			resp := c.stream(ctx, turn.ID, last)
			n := 1 + rng.IntN(6)
			_, _ = readFrames(resp.Body, func(f frame) bool {
				if f.Data == "" {
					return true
				}
				e := mustEvent(t, f)
				got = append(got, e)
				last = e.Seq
				if e.Type.Terminal() {
					done = true
					return false
				}
				n--
				return n > 0
			})
			cancel()
			resp.Body.Close()
			drops++
		}
		full := c.allEvents(turn.ID, -1)
		if !eventsEqual(got, full) {
			t.Fatalf("round %d: %d drops: resumed live stream differs from the log (%d events, want %d)", round, drops, len(got), len(full))
		}
		checkStream(t, srv, full)
	}
}

// TestSnapshotAfterPrune checks that a cursor older than the retained log
// gets a snapshot with the final content, then the end of the stream.
func TestSnapshotAfterPrune(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	c := newClient(t, srv.URL, "")
	turn := c.postTurn(c.newConversation(), twoToolQuestion)
	full := c.allEvents(turn.ID, -1)
	n, err := srv.DB.PruneEvents(context.Background(), time.Now().Add(time.Hour))
	if err != nil || n == 0 {
		t.Fatalf("pruning: %d events, %v", n, err)
	}
	// The runner keeps a finished turn's recent events in memory for a
	// while; once it forgets them, only the store answers.
	srv.App.Runner.Hub().Prune(0)
	got := c.allEvents(turn.ID, 3)
	if len(got) != 1 || got[0].Type != toolmark.EventSnapshot {
		t.Fatalf("after pruning: got %s, want one snapshot", summarize(got))
	}
	var snap toolmark.SnapshotData
	if err := json.Unmarshal(got[0].Data, &snap); err != nil {
		t.Fatal(err)
	}
	want, err := replayLog(full)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Content != want || snap.Seq != full[len(full)-1].Seq || snap.Status != toolmark.TurnCompleted {
		t.Errorf("snapshot: seq %d status %s content %q; want seq %d completed %q", snap.Seq, snap.Status, snap.Content, full[len(full)-1].Seq, want)
	}
	if len(snap.ToolCalls) == 0 {
		t.Error("snapshot has no tool calls")
	}
	if again := c.allEvents(turn.ID, snap.Seq); len(again) != 0 {
		t.Errorf("resuming at the snapshot's seq: got %d events, want none", len(again))
	}
}

// TestTwoFollowers checks that two clients following one live turn see the
// same events.
func TestTwoFollowers(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 2 * time.Millisecond})
	c := newClient(t, srv.URL, "")
	turn := c.postTurn(c.newConversation(), twoToolQuestion)
	var wg sync.WaitGroup
	got := make([][]toolmark.Event, 2)
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); got[i] = c.allEvents(turn.ID, -1) }()
	}
	wg.Wait()
	if !eventsEqual(got[0], got[1]) {
		t.Fatalf("followers differ: %d and %d events", len(got[0]), len(got[1]))
	}
	checkStream(t, srv, got[0])
}

// TestCancelMidTool cancels a turn while a tool call is open: every tool
// that had not finished becomes cancelled, the turn ends turn_cancelled, and
// the stored message keeps no pending or running tag.
func TestCancelMidTool(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 15 * time.Millisecond})
	c := newClient(t, srv.URL, "")
	turn := c.postTurn(c.newConversation(), twoToolQuestion)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp := c.stream(ctx, turn.ID, -1)
	defer resp.Body.Close()
	var evs []toolmark.Event
	cancelled := false
	_, _ = readFrames(resp.Body, func(f frame) bool {
		if f.Data == "" {
			return true
		}
		e := mustEvent(t, f)
		evs = append(evs, e)
		if e.Type == toolmark.EventToolCallStarted && !cancelled {
			cancelled = true
			c.mustJSON("POST", "/api/turns/"+turn.ID+"/cancel", "", http.StatusAccepted, nil)
			c.mustJSON("POST", "/api/turns/"+turn.ID+"/cancel", "", http.StatusAccepted, nil) // idempotent
		}
		return !e.Type.Terminal()
	})
	if !cancelled {
		t.Fatal("no tool call started")
	}
	last := evs[len(evs)-1]
	if last.Type != toolmark.EventTurnCancelled {
		t.Fatalf("turn ended with %s, want turn_cancelled", last.Type)
	}
	checkStream(t, srv, evs)
	sawCancelled := false
	for _, e := range evs {
		if e.Type == toolmark.EventToolCallError {
			var d toolmark.ToolCallData
			_ = json.Unmarshal(e.Data, &d)
			if d.Status == "cancelled" {
				sawCancelled = true
			}
		}
	}
	if !sawCancelled {
		t.Errorf("no tool call was cancelled:\n%s", summarize(evs))
	}
	var tr struct {
		Turn    toolmark.Turn `json:"turn"`
		Content string        `json:"content"`
	}
	c.mustJSON("GET", "/api/turns/"+turn.ID, "", 200, &tr)
	if tr.Turn.Status != toolmark.TurnCancelled {
		t.Errorf("turn status %s, want cancelled", tr.Turn.Status)
	}
	if !strings.Contains(tr.Content, `status="cancelled"`) {
		t.Errorf("stored content shows no cancelled tag: %q", tr.Content)
	}
}

// TestDisconnectDoesNotStopTurn posts a turn as a stream, leaves after two
// events, and checks that the turn still completes and persists.
func TestDisconnectDoesNotStopTurn(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 5 * time.Millisecond})
	c := newClient(t, srv.URL, "")
	conv := c.newConversation()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/api/conversations/"+conv+"/turns",
		strings.NewReader(`{"content":"`+twoToolQuestion+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("got %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	turnID := resp.Header.Get("X-Turn-Id")
	n := 0
	_, _ = readFrames(resp.Body, func(f frame) bool {
		if f.Data != "" {
			n++
		}
		return n < 2
	})
	cancel()
	resp.Body.Close()
	evs := c.allEvents(turnID, -1) // waits for the end
	if evs[len(evs)-1].Type != toolmark.EventTurnCompleted {
		t.Fatalf("turn ended with %s", evs[len(evs)-1].Type)
	}
	checkStream(t, srv, evs)
}
