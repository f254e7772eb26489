package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// follow collects a turn's events after a seq.
func follow(c *client.Client, turnID string, after int64) ([]toolmark.Event, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var evs []toolmark.Event
	err := c.Follow(ctx, turnID, after, func(ev toolmark.Event) error {
		evs = append(evs, ev)
		return nil
	})
	return evs, err
}

func followAll(tb testing.TB, c *client.Client, turnID string, after int64) []toolmark.Event {
	tb.Helper()
	evs, err := follow(c, turnID, after)
	if err != nil {
		tb.Fatalf("following %s after %d: %v", turnID, after, err)
	}
	return evs
}

func eventsJSON(tb testing.TB, evs []toolmark.Event) string {
	tb.Helper()
	b, err := json.Marshal(evs)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// TestFollowRealServer follows a demo turn through a proxy that cuts the
// stream every 150 ms, next to an uninterrupted follower: both get the same
// events, seq 1..N without a gap, ending with turn_completed; following the
// finished turn again from 0 and from the middle replays the same log.
func TestFollowRealServer(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 20 * time.Millisecond})
	proxy := httptest.NewServer(newCutProxy(srv.URL))
	defer proxy.Close()
	ctx := context.Background()
	direct := client.New(srv.URL)
	cut := client.New(proxy.URL, client.WithMaxBackoff(200*time.Millisecond), client.WithRetries(50))

	conv, err := direct.CreateConversation(ctx, "follow")
	if err != nil {
		t.Fatal(err)
	}
	ti, err := direct.PostTurn(ctx, conv.ID, "How does resuming a stream work, and what is a snapshot?", "k1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := direct.PostTurn(ctx, conv.ID, "How does resuming a stream work, and what is a snapshot?", "k1")
	if err != nil || again.Turn.ID != ti.Turn.ID {
		t.Fatalf("a retried POST with the same Idempotency-Key: %v, turn %s, want %s", err, again.Turn.ID, ti.Turn.ID)
	}

	var wg sync.WaitGroup
	var viaCut, viaDirect []toolmark.Event
	wg.Add(2)
	var errCut, errDirect error
	go func() { defer wg.Done(); viaCut, errCut = follow(cut, ti.Turn.ID, 0) }()
	go func() { defer wg.Done(); viaDirect, errDirect = follow(direct, ti.Turn.ID, 0) }()
	stop, stopped := make(chan struct{}), make(chan struct{})
	cuts := 0
	go func() {
		defer close(stopped)
		tick := time.NewTicker(150 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if resp, err := http.Post(proxy.URL+"/__test/cut", "application/json", nil); err == nil {
					var n struct{ Cut int }
					json.NewDecoder(resp.Body).Decode(&n)
					resp.Body.Close()
					cuts += n.Cut
				}
			}
		}
	}()
	wg.Wait()
	close(stop)
	<-stopped
	if errCut != nil || errDirect != nil {
		t.Fatalf("following: through the cutting proxy: %v; directly: %v", errCut, errDirect)
	}
	t.Logf("%d events, %d cuts", len(viaDirect), cuts)

	for i, ev := range viaDirect {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
	}
	if n := len(viaDirect); n == 0 || viaDirect[n-1].Type != toolmark.EventTurnCompleted {
		t.Fatalf("the stream did not end with turn_completed")
	}
	if eventsJSON(t, viaCut) != eventsJSON(t, viaDirect) {
		t.Errorf("the cut follower's events differ from the direct one's")
	}
	if got := followAll(t, direct, ti.Turn.ID, 0); eventsJSON(t, got) != eventsJSON(t, viaDirect) {
		t.Errorf("replaying the finished turn from 0 gives other events")
	}
	mid := int64(len(viaDirect) / 2)
	if got := followAll(t, direct, ti.Turn.ID, mid); eventsJSON(t, got) != eventsJSON(t, viaDirect[mid:]) {
		t.Errorf("replaying from %d gives other events", mid)
	}
}

// TestFollowPrunedSnapshot: once a finished turn's log is pruned, following
// it from 0 gives one snapshot holding the stored content, and Follow ends.
func TestFollowPrunedSnapshot(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	c := client.New(srv.URL)
	res, err := c.Chat(ctx, "", "What is a ToolCall tag?")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.DB.PruneEvents(ctx, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	// The server keeps a finished turn's recent events in memory for a
	// while; once it forgets them, only the store answers.
	srv.App.Runner.Hub().Prune(0)
	evs := followAll(t, c, res.Turn.ID, 0)
	if len(evs) != 1 || evs[0].Type != toolmark.EventSnapshot {
		t.Fatalf("got %d events (%s), want one snapshot", len(evs), eventsJSON(t, evs))
	}
	var snap toolmark.SnapshotData
	if err := json.Unmarshal(evs[0].Data, &snap); err != nil {
		t.Fatal(err)
	}
	if snap.Content != res.Message.Content || snap.Status != toolmark.TurnCompleted || snap.Seq == 0 {
		t.Errorf("snapshot seq %d status %s, content equal: %v", snap.Seq, snap.Status, snap.Content == res.Message.Content)
	}
}
