package fanout

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
)

func frames(turnID string, from, to int64, last toolmark.EventType) []Frame {
	var out []Frame
	for seq := from; seq <= to; seq++ {
		typ := toolmark.EventTextDelta
		if seq == to && last != "" {
			typ = last
		}
		out = append(out, NewFrame(toolmark.Event{Seq: seq, TurnID: turnID, Type: typ, Time: time.Unix(seq, 0).UTC(), Data: []byte(`{"text":"x"}`)}, nil))
	}
	return out
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestHubTail(t *testing.T) {
	h := NewHub(nil)
	h.Open("t1", nil, nil)
	tail := h.After("t1", 0)
	if tail.Store || len(tail.Frames) != 0 || isClosed(tail.Wake) {
		t.Fatalf("new local turn: %+v", tail)
	}
	h.Publish("t1", frames("t1", 1, 3, ""))
	if !isClosed(tail.Wake) {
		t.Fatal("not woken by Publish")
	}
	if got := h.After("t1", 1).Frames; len(got) != 2 || got[0].Event.Seq != 2 {
		t.Fatalf("After(1) = %d frames", len(got))
	}
	if f := h.After("t1", 1).Frames[0]; !strings.Contains(string(f.SSE()), "id: 2\nevent: text_delta\n") || string(f.Event.Data) != `{"text":"x"}` {
		t.Errorf("frame %q", f.SSE())
	}
	w := h.After("t1", 3).Wake
	h.Publish("t1", frames("t1", 2, 3, "")) // old: no wake-up
	h.Publish("t2", frames("t2", 1, 1, "")) // another turn
	if isClosed(w) {
		t.Error("woken by old frames or another turn")
	}
	h.Publish("t1", frames("t1", 4, 5, toolmark.EventTurnCompleted))
	if tail := h.After("t1", 5); !tail.Done {
		t.Errorf("after the terminal event: %+v", tail)
	}
}

func TestHubTailBound(t *testing.T) {
	h := NewHub(nil)
	h.maxBytes = 1000
	h.Open("t", nil, nil)
	h.Publish("t", frames("t", 1, 50, ""))
	if tail := h.After("t", 0); !tail.Store {
		t.Errorf("a cursor older than the bounded tail must read the store")
	}
	if tail := h.After("t", 49); len(tail.Frames) != 1 || tail.Store {
		t.Errorf("recent cursor: %+v", tail)
	}
	// A gap drops the tail rather than serve it with a hole.
	h.Publish("t", frames("t", 60, 60, ""))
	if tail := h.After("t", 50); !tail.Store {
		t.Errorf("after a gap: %+v", tail)
	}
}

// TestHubTailFramesKept: the frames After returned stay as they were while
// the tail is trimmed behind them, as a follower (or the hub's writer)
// uses them after the hub's lock is released.
func TestHubTailFramesKept(t *testing.T) {
	h := NewHub(nil)
	h.tailSize = 64 // room to grow in place, as a turn's tail usually has
	h.Open("t", nil, nil)
	h.Publish("t", frames("t", 1, 10, ""))
	held := h.After("t", 0).Frames
	h.maxBytes = 1 // the next publish trims the tail to its last frame
	h.Publish("t", frames("t", 11, 12, ""))
	if tail := h.After("t", 0); !tail.Store {
		t.Fatalf("the tail was not trimmed: %+v", tail)
	}
	for i, f := range held {
		if f.Event.Seq != int64(i+1) || !strings.Contains(string(f.SSE()), "id: "+strconv.Itoa(i+1)+"\n") {
			t.Fatalf("held frame %d changed to seq %d %q after the trim", i, f.Event.Seq, f.SSE())
		}
	}
}

// TestHubRemote: a turn of another replica is read from the store once per
// notification, whatever the number of followers.
func TestHubRemote(t *testing.T) {
	var loads atomic.Int32
	stored := frames("r", 1, 10, toolmark.EventTurnCompleted)
	h := NewHub(eventsFunc(func(_ context.Context, id string, after int64) ([]toolmark.Event, error) {
		loads.Add(1)
		var out []toolmark.Event
		for _, f := range stored {
			if f.Event.Seq > after && f.Event.Seq <= 6 {
				out = append(out, f.Event)
			}
		}
		return out, nil
	}))
	var leaves []func()
	for range 5 {
		leaves = append(leaves, h.Join("r"))
	}
	if tail := h.After("r", 0); !tail.Store {
		t.Fatalf("unknown remote turn must be read from the store first: %+v", tail)
	}
	h.Seed("r", stored[:3]) // the first follower's own read
	w := h.After("r", 3).Wake
	h.Notify("r", 6)
	select {
	case <-w:
	case <-time.After(5 * time.Second):
		t.Fatal("not woken after a notification")
	}
	for i := 0; i < 100 && len(h.After("r", 3).Frames) < 3; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if got := h.After("r", 3).Frames; len(got) != 3 || got[2].Event.Seq != 6 {
		t.Fatalf("after the notification: %d frames", len(got))
	}
	if n := loads.Load(); n != 1 {
		t.Errorf("%d store reads for 5 followers and one notification, want 1", n)
	}
	h.Notify("r", 6) // nothing new
	h.Open("x", nil, nil)
	h.Notify("x", 9) // local turns ignore notifications
	if n := loads.Load(); n != 1 {
		t.Errorf("%d store reads, want still 1", n)
	}
	for _, l := range leaves {
		l()
	}
	h.Prune(0)
	if _, ok := h.turns["r"]; ok {
		t.Error("Prune kept a remote turn nobody follows")
	}
}

// TestHubTailMadeOnce: once turns have finished, the tail of a new turn of
// the same length is made once, not grown by doubling: publishing its
// frames one by one allocates a wake-up channel each and one tail.
func TestHubTailMadeOnce(t *testing.T) {
	h := NewHub(nil)
	const n = 90
	for i := range 40 {
		id := "warm" + strconv.Itoa(i)
		h.Publish(id, frames(id, 1, n, toolmark.EventTurnCompleted))
	}
	if h.tailSize < n-1 || h.tailSize > n {
		t.Fatalf("tail size %d after turns of %d frames", h.tailSize, n)
	}
	one := frames("t", 1, n, toolmark.EventTurnCompleted)
	runs := 0
	allocs := testing.AllocsPerRun(5, func() {
		id := "t" + strconv.Itoa(runs)
		runs++
		for i := range one {
			h.Publish(id, one[i:i+1])
		}
	})
	// Per run: the turn's entry and its first channel, a channel per frame,
	// and the tail; doubling would add 7 more.
	if want := float64(n + 4); allocs > want {
		t.Errorf("publishing %d frames one by one: %.0f allocations, want at most %.0f", n, allocs, want)
	}
	if h.tailSize > maxTailSize {
		t.Errorf("tail size %d over %d", h.tailSize, maxTailSize)
	}
}

// eventsFunc is a Log of events alone, without snapshots.
type eventsFunc func(ctx context.Context, turnID string, after int64) ([]toolmark.Event, error)

func (f eventsFunc) EventsAfter(ctx context.Context, turnID string, after int64, _ int) ([]toolmark.Event, error) {
	return f(ctx, turnID, after)
}

func (f eventsFunc) Snapshot(context.Context, string) (toolmark.SnapshotData, error) {
	return toolmark.SnapshotData{}, errors.New("no snapshots here")
}

// TestHubPollIdle: the keep-alives of many idle followers of a remote turn
// read its store once.
func TestHubPollIdle(t *testing.T) {
	var loads atomic.Int32
	h := NewHub(eventsFunc(func(context.Context, string, int64) ([]toolmark.Event, error) {
		loads.Add(1)
		return nil, nil
	}))
	for range 100 {
		defer h.Join("r")()
	}
	h.Seed("r", frames("r", 1, 3, ""))
	for range 100 {
		h.PollIdle("r")
	}
	for i := 0; i < 100 && loads.Load() == 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if n := loads.Load(); n != 1 {
		t.Errorf("%d store reads for 100 idle followers' keep-alives, want 1", n)
	}
}
