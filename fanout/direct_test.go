package fanout

import (
	"errors"
	"fmt"
	"runtime"
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

// newDirect returns a follower of w and a channel signalled each time the
// hub hands it back.
func newDirect(w DirectWriter) (*Direct, <-chan struct{}) {
	wake := make(chan struct{}, 1)
	return NewDirect(w, func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}), wake
}

// woken waits for a follower to be handed back.
func woken(t *testing.T, wake <-chan struct{}) {
	t.Helper()
	select {
	case <-wake:
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
	h.Open("t", nil, nil)
	h.Publish("t", frames("t", 1, 3, ""))
	r := &recorder{}
	d, wake := newDirect(r)
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
	case <-wake:
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
		{name: "turn goes remote", then: func(h *Hub) { h.Close("t") }, cursor: 3},
		{name: "gap in the tail", then: func(h *Hub) { h.Publish("t", frames("t", 9, 9, "")) }, cursor: 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := NewHub(nil)
			h.Open("t", nil, nil)
			h.Publish("t", frames("t", 1, 3, ""))
			r := &recorder{take: c.take, fail: c.fail}
			d, wake := newDirect(r)
			if !h.Park("t", d, 3) {
				t.Fatal("not parked")
			}
			c.then(h)
			woken(t, wake)
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
	d, _ := newDirect(&recorder{})
	if h.Park("unknown", d, 0) {
		t.Error("parked on an unknown turn")
	}
	h.Publish("remote", frames("remote", 1, 2, "")) // not Local
	if h.Park("remote", d, 2) {
		t.Error("parked on a remote turn")
	}
	h.Open("done", nil, nil)
	h.Publish("done", frames("done", 1, 2, toolmark.EventTurnCompleted))
	if h.Park("done", d, 2) {
		t.Error("parked on an ended turn")
	}
	h.Open("t", nil, nil)
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
		h.Open(ids[i], nil, nil)
		h.Publish(ids[i], frames(ids[i], 1, 1, ""))
		for range perTurn {
			r := &recorder{}
			if !h.Park(ids[i], NewDirect(r, func() {}), 1) {
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

// restWriter is a DirectWriter whose connection takes a random part of
// each write: the seqs it took go to the log, the others wait in rest for
// the follower's goroutine, as takenStream keeps its unwritten bytes.
type restWriter struct {
	log  []int64
	rest []int64
	rnd  uint64
}

func (w *restWriter) TryWrite(frames []Frame) (bool, error) {
	if len(w.rest) > 0 {
		panic("written while a rest waits")
	}
	w.rnd = w.rnd*6364136223846793005 + 1442695040888963407
	n := len(frames)
	if w.rnd>>60 == 0 { // one write in sixteen falls short
		n = int(w.rnd>>32) % n
	}
	for i, f := range frames {
		runtime.Gosched() // a write takes a while: the tail moves meanwhile
		if i < n {
			w.log = append(w.log, f.Event.Seq)
		} else {
			w.rest = append(w.rest, f.Event.Seq)
		}
	}
	return n == len(frames), nil
}

// TestParkFollowersOnATrimmedTail runs followers as the stream handlers do
// (read the tail, else the store; park when caught up; take over when
// handed back) on turns whose tail is trimmed as they go, with writes that
// fall short at random (run with -race): every follower gets every event
// once, in order, and no frame it holds changes under it.
func TestParkFollowersOnATrimmedTail(t *testing.T) {
	h := NewHub(nil)
	h.maxBytes = 2000 // about 20 frames
	h.tailSize = 64   // the tail grows in place, behind the frames followers hold
	const turns, perTurn, last = 8, 3, 400
	logs := make([]*storeLog, turns)
	var followers sync.WaitGroup
	results := make(chan string, turns*perTurn)
	for i := range turns {
		id := "t" + string(rune('a'+i))
		h.Open(id, nil, nil)
		logs[i] = &storeLog{all: frames(id, 1, last, toolmark.EventTurnCompleted)}
		logs[i].commit(h, id, 1)
		for k := range perTurn {
			followers.Add(1)
			go func() {
				defer followers.Done()
				results <- follow(h, id, last, logs[i], uint64(i*perTurn+k+1))
			}()
		}
	}
	var publishers sync.WaitGroup
	for i := range turns {
		publishers.Add(1)
		go func() {
			defer publishers.Done()
			id := "t" + string(rune('a'+i))
			for seq := 2; seq <= last; {
				n := min(1+seq%3, last-seq+1) // commits of one to three events
				logs[i].commit(h, id, n)
				seq += n
				switch {
				case i%2 == 1: // paced: the followers catch up and park
					time.Sleep(100 * time.Microsecond)
				case seq%5 == i%5: // in bursts: the tail is trimmed under them
					time.Sleep(50 * time.Microsecond)
				}
			}
		}()
	}
	publishers.Wait()
	followers.Wait()
	close(results)
	for r := range results {
		if r != "" {
			t.Error(r)
		}
	}
	if st := h.DirectStats(); st.Writes == 0 || st.HandedBack == 0 {
		t.Errorf("%+v: the test did not write parked followers or hand any back", st)
	}
}

// storeLog stands for the store: the frames of a turn committed so far.
type storeLog struct {
	mu        sync.Mutex
	all       []Frame
	committed int
}

// commit commits the next n frames, then publishes them (persist, then
// publish).
func (s *storeLog) commit(h *Hub, id string, n int) {
	s.mu.Lock()
	fs := s.all[s.committed : s.committed+n]
	s.committed += n
	s.mu.Unlock()
	h.Publish(id, fs)
}

func (s *storeLog) after(cursor int64) []Frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.all[cursor:s.committed]
}

// follow follows id from the start as followFrames does, and returns what
// went wrong, or "".
func follow(h *Hub, id string, last int64, store *storeLog, seed uint64) string {
	w := &restWriter{rnd: seed}
	d, wake := newDirect(w)
	var cursor int64
	deliver := func(fs []Frame) bool {
		for _, f := range fs {
			runtime.Gosched()
			w.log = append(w.log, f.Event.Seq)
			cursor = f.Event.Seq
			if f.Event.Type.Terminal() {
				return true
			}
		}
		return false
	}
	check := func() string {
		for i, s := range w.log {
			if s != int64(i+1) {
				return fmt.Sprintf("%s: event %d has seq %d", id, i, s)
			}
		}
		if int64(len(w.log)) != last {
			return fmt.Sprintf("%s: %d events", id, len(w.log))
		}
		return ""
	}
	for {
		tail := h.After(id, cursor)
		switch {
		case tail.Store:
			if deliver(store.after(cursor)) {
				return check()
			}
			continue
		case len(tail.Frames) > 0:
			if deliver(tail.Frames) {
				return check()
			}
			continue
		case tail.Done:
			return check()
		}
		if !h.Park(id, d, cursor) {
			<-tail.Wake
			continue
		}
		select {
		case <-wake:
		case <-time.After(10 * time.Second):
			return id + ": parked and never handed back"
		}
		c, err := h.Unpark(d)
		if err != nil {
			return err.Error()
		}
		w.log, w.rest = append(w.log, w.rest...), w.rest[:0]
		cursor = c
		if n := len(w.log); n > 0 && w.log[n-1] == last {
			return check()
		}
	}
}
