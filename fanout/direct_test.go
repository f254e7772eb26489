package fanout

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
)

// recorder is a DirectWriter that records the seqs written to it; it takes
// only take frames of a write when take > 0, and fails with fail.
type recorder struct {
	mu    sync.Mutex
	seqs  []int64
	take  int
	fail  error
	calls int
}

func (r *recorder) TryWrite(frames []Frame) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.fail != nil {
		return false, r.fail
	}
	n := len(frames)
	if r.take > 0 && r.take < n {
		n = r.take
	}
	for _, f := range frames[:n] {
		r.seqs = append(r.seqs, f.Event.Seq)
	}
	return n == len(frames), nil
}

func (r *recorder) written() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int64(nil), r.seqs...)
}

// woken waits for d to be handed back.
func woken(t *testing.T, d *Direct) {
	t.Helper()
	select {
	case <-d.Wake():
	case <-time.After(10 * time.Second):
		t.Fatal("the parked follower was not handed back")
	}
}

// waitWritten waits until the recorder holds n seqs.
func waitWritten(t *testing.T, r *recorder, n int) []int64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := r.written()
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(time.Millisecond)
	}
}

func seqsEqual(a []int64, from, to int64) bool {
	if int64(len(a)) != to-from+1 {
		return false
	}
	for i, s := range a {
		if s != from+int64(i) {
			return false
		}
	}
	return true
}

func TestParkWritesAfterEachPublish(t *testing.T) {
	h := NewHub(nil)
	h.Local("t")
	h.Publish("t", frames("t", 1, 3, ""))
	r := &recorder{}
	d := NewDirect(r)
	if h.Park("t", d, 2) {
		t.Fatal("parked behind the tail's end")
	}
	if !h.Park("t", d, 3) {
		t.Fatal("not parked at the tail's end")
	}
	h.Publish("t", frames("t", 4, 5, ""))
	h.Publish("t", frames("t", 6, 6, ""))
	if got := waitWritten(t, r, 3); !seqsEqual(got, 4, 6) {
		t.Fatalf("written %v, want 4..6", got)
	}
	select {
	case <-d.Wake():
		t.Fatal("woken while every write went through")
	default:
	}
	cursor, err := h.Unpark(d)
	if cursor != 6 || err != nil {
		t.Fatalf("Unpark = %d, %v; want 6, nil", cursor, err)
	}
	h.Publish("t", frames("t", 7, 7, ""))
	time.Sleep(20 * time.Millisecond)
	if got := r.written(); len(got) != 3 {
		t.Fatalf("written after Unpark: %v", got)
	}
	if st := h.DirectStats(); st.Writes < 1 || st.HandedBack != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestParkHandsBack(t *testing.T) {
	cases := []struct {
		name   string
		take   int
		fail   error
		then   func(h *Hub)
		cursor int64
		err    bool
	}{
		{name: "short write", take: 1, then: func(h *Hub) { h.Publish("t", frames("t", 4, 6, "")) }, cursor: 6},
		{name: "write error", fail: errors.New("broken pipe"), then: func(h *Hub) { h.Publish("t", frames("t", 4, 4, "")) }, cursor: 4, err: true},
		{name: "terminal event", then: func(h *Hub) { h.Publish("t", frames("t", 4, 5, toolmark.EventTurnCompleted)) }, cursor: 5},
		{name: "turn goes remote", then: func(h *Hub) { h.Remote("t") }, cursor: 3},
		{name: "gap in the tail", then: func(h *Hub) { h.Publish("t", frames("t", 9, 9, "")) }, cursor: 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := NewHub(nil)
			h.Local("t")
			h.Publish("t", frames("t", 1, 3, ""))
			r := &recorder{take: c.take, fail: c.fail}
			d := NewDirect(r)
			if !h.Park("t", d, 3) {
				t.Fatal("not parked")
			}
			c.then(h)
			woken(t, d)
			cursor, err := h.Unpark(d)
			if cursor != c.cursor || (err != nil) != c.err {
				t.Fatalf("Unpark = %d, %v; want %d, error %v", cursor, err, c.cursor, c.err)
			}
			calls := r.calls
			h.Publish("t", frames("t", cursor+1, cursor+1, ""))
			time.Sleep(20 * time.Millisecond)
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.calls != calls {
				t.Errorf("written after being handed back")
			}
		})
	}
}

func TestParkRefused(t *testing.T) {
	h := NewHub(nil)
	d := NewDirect(&recorder{})
	if h.Park("unknown", d, 0) {
		t.Error("parked on an unknown turn")
	}
	h.Publish("remote", frames("remote", 1, 2, "")) // not Local
	if h.Park("remote", d, 2) {
		t.Error("parked on a remote turn")
	}
	h.Local("done")
	h.Publish("done", frames("done", 1, 2, toolmark.EventTurnCompleted))
	if h.Park("done", d, 2) {
		t.Error("parked on an ended turn")
	}
	h.Local("t")
	h.Publish("t", frames("t", 1, 2, ""))
	if !h.Park("t", d, 2) {
		t.Fatal("not parked")
	}
	if h.Park("t", d, 2) {
		t.Error("parked twice")
	}
}

// TestParkManyFollowers parks followers of many turns and publishes from
// several goroutines at once (run with -race): each follower gets its
// turn's frames once, in order.
func TestParkManyFollowers(t *testing.T) {
	h := NewHub(nil)
	const turns, perTurn = 20, 3
	ids := make([]string, turns)
	recs := make([][]*recorder, turns)
	for i := range ids {
		ids[i] = "t" + string(rune('a'+i))
		h.Local(ids[i])
		h.Publish(ids[i], frames(ids[i], 1, 1, ""))
		for range perTurn {
			r := &recorder{}
			if !h.Park(ids[i], NewDirect(r), 1) {
				t.Fatal("not parked")
			}
			recs[i] = append(recs[i], r)
		}
	}
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := int64(2); seq <= 50; seq++ {
				h.Publish(id, frames(id, seq, seq, ""))
				if seq%7 == int64(i%7) {
					time.Sleep(time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	for i := range ids {
		for _, r := range recs[i] {
			if got := waitWritten(t, r, 49); !seqsEqual(got, 2, 50) {
				t.Fatalf("turn %s: written %v", ids[i], got)
			}
		}
	}
}
