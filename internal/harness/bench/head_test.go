package bench

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/sse"
)

// An event as the server frames it is read without decoding its data, and
// to what encoding/json reads.
func TestHeadPrefixReadsServerEvents(t *testing.T) {
	for _, e := range []toolmark.Event{
		{Seq: 7, TurnID: "0b7c8a3e-2f1d-4c5e-9a6b-1d2e3f4a5b6c", MessageID: "m", Type: toolmark.EventTextDelta, Time: time.Date(2026, 11, 26, 23, 4, 5, 678900000, time.UTC), Data: json.RawMessage(`"hi"`)},
		{Seq: 2, TurnID: "t", MessageID: "m", Type: toolmark.EventToolCallRunning, Time: time.Unix(0, 1000).UTC(), Data: json.RawMessage(`{"seq":99,"type":"x","time":"bad"}`)},
	} {
		frame, start, _ := sse.AppendEvent(nil, e)
		at := strings.Index(string(frame), "\ndata: ") + len("\ndata: ") // where the event's JSON begins
		data := strings.TrimSuffix(string(frame[at:]), "\n\n")
		h, n, ok := headPrefix(data)
		if !ok {
			t.Fatalf("headPrefix(%s) fell back", data)
		}
		if n != start-at {
			t.Errorf("headPrefix(%s) read %d bytes; want up to the data", data, n)
		}
		if h.Seq != e.Seq || h.Type != e.Type || !h.Time.Equal(e.Time) {
			t.Errorf("headPrefix(%s) = %+v; want seq %d, type %s, time %v", data, h, e.Seq, e.Type, e.Time)
		}
		var whole eventHead
		if err := json.Unmarshal([]byte(data), &whole); err != nil || whole != h {
			t.Errorf("encoding/json reads %+v (%v); headPrefix %+v", whole, err, h)
		}
	}
}

// A head headPrefix does not expect goes to encoding/json: the same
// result, or its error. What follows the data is not read.
func TestDecodeHeadFallsBack(t *testing.T) {
	for _, tc := range []struct {
		data string
		want eventHead
		err  bool
	}{
		{data: `{ "seq":3,"type":"usage","time":"2026-01-02T03:04:05Z","data":{}}`, want: eventHead{Seq: 3, Type: "usage", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}},
		{data: `{"seq":3,"type":"us\u0061ge","data":null}`, want: eventHead{Seq: 3, Type: "usage"}},
		{data: `{"seq":3,"SEQ":4,"data":null}`, want: eventHead{Seq: 4}},
		{data: `{"seq":3,"data":null,"seq":5}`, want: eventHead{Seq: 3}}, // read up to the data only
		{data: `{"seq":3,"data":{`, want: eventHead{Seq: 3}},
		{data: `{"type":"x","data":1}`, want: eventHead{Type: "x"}},
		{data: `{"seq":"3","data":1}`, err: true},
		{data: `{"seq":03,"data":1}`, err: true},
		{data: `{"seq":3,"time":"yesterday","data":1}`, err: true},
		{data: `not json`, err: true},
	} {
		h, err := decodeHead(tc.data)
		if (err != nil) != tc.err || err == nil && (h.Seq != tc.want.Seq || h.Type != tc.want.Type || !h.Time.Equal(tc.want.Time)) {
			t.Errorf("decodeHead(%s) = %+v, %v; want %+v (error: %v)", tc.data, h, err, tc.want, tc.err)
		}
	}
}

// FuzzHeadPrefix: whatever headPrefix reads, encoding/json reads the same
// from the prefix it read, closed after "data".
func FuzzHeadPrefix(f *testing.F) {
	for _, s := range []string{
		`{"seq":12,"turnId":"t","messageId":"m","type":"text_delta","time":"2026-11-26T23:04:05.6789Z","data":"x"}`,
		`{"seq":-1,"time":"2026-11-26T23:04:05+01:00","data":`,
		`{"type":"é","seq":0,"data":`,
		`{"seq":1,"time":"2026-11-26T24:00:00Z","data":`,
		`{"turnId":12,"data":`,
		`{"seq":0,"messageId":"","data":`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		h, n, ok := headPrefix(data)
		if !ok {
			return
		}
		var ref eventHead
		if err := json.Unmarshal([]byte(data[:n]+"null}"), &ref); err != nil {
			t.Fatalf("headPrefix read %q, which encoding/json rejects: %v", data[:n], err)
		}
		if ref.Seq != h.Seq || ref.Type != h.Type || !ref.Time.Equal(h.Time) || ref.Time.Location().String() != h.Time.Location().String() {
			t.Fatalf("headPrefix(%q) = %+v; encoding/json reads %+v", data[:n], h, ref)
		}
	})
}
