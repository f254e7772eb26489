package fanout

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/toolmark/toolmark"
)

// TestFrameEncodedOnce: however many followers ask at once, through
// however many copies of the frame, each encoding of a frame is made once
// and they all get the same bytes; a frame not made by NewFrame keeps
// nothing.
func TestFrameEncodedOnce(t *testing.T) {
	f := NewFrame(toolmark.Event{Seq: 3, TurnID: "t", MessageID: "m", Type: toolmark.EventTextDelta, Time: time.Unix(1, 0).UTC(), Data: []byte(`{"text":"x"}`)}, nil)
	var made atomic.Int32
	encode := func(f Frame) []byte { made.Add(1); return append([]byte(nil), f.Event.Data...) }
	got := make([][]byte, 16)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func(c Frame) { // a copy, as a tail hands out
			defer wg.Done()
			got[i] = c.Encoded(EncodingSSEDeflate, encode)
			_ = c.SSE()
		}(f)
	}
	wg.Wait()
	if made.Load() != 1 {
		t.Errorf("the encoding was made %d times, want once", made.Load())
	}
	for i := range got {
		if unsafe.SliceData(got[i]) != unsafe.SliceData(got[0]) {
			t.Fatalf("follower %d got bytes of its own", i)
		}
	}
	if a, b := f.SSE(), f.SSE(); unsafe.SliceData(a) != unsafe.SliceData(b) || string(a) != "id: 3\nevent: text_delta\ndata: {\"seq\":3,\"turnId\":\"t\",\"messageId\":\"m\",\"type\":\"text_delta\",\"time\":\"1970-01-01T00:00:01Z\",\"data\":{\"text\":\"x\"}}\n\n" {
		t.Errorf("SSE %q, not kept", a)
	}
	bare := Frame{Event: f.Event}
	bare.Encoded(EncodingSSEDeflate, encode)
	bare.Encoded(EncodingSSEDeflate, encode)
	if made.Load() != 3 {
		t.Errorf("a bare frame's encoding was made %d times in all, want 3", made.Load())
	}
}
