package sse

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
	"unsafe"

	"github.com/toolmark/toolmark"
)

// TestAppendEventMatchesMarshal: the hand-built frame carries exactly what
// json.Marshal writes for the event.
func TestAppendEventMatchesMarshal(t *testing.T) {
	data, _ := json.Marshal(toolmark.ToolCallData{ToolCallID: "c<1>", Markup: `<ToolCall type="a" status="running" toolCallId="c&1">`, Error: "é\u2028\x01"})
	for _, e := range []toolmark.Event{
		{Seq: 7, TurnID: "0b7c8a3e-2f1d-4c5e-9a6b-1d2e3f4a5b6c", MessageID: "m", Type: toolmark.EventToolCallRunning, Time: time.Date(2026, 1, 2, 3, 4, 5, 678900000, time.UTC), Data: data},
		{Seq: 1, TurnID: "we\"ird\n", MessageID: "<m>", Type: "x&y", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Data: json.RawMessage(`{}`)},
		{Seq: 2, TurnID: "t", Type: toolmark.EventTurnQueued, Time: time.Unix(0, 1000).UTC()},
	} {
		body, _ := json.Marshal(e)
		want := fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Type, body)
		got, start, end := AppendEvent(nil, e)
		if string(got) != want {
			t.Errorf("frame\ngot  %q\nwant %q", got, want)
		}
		if len(e.Data) > 0 && string(got[start:end]) != string(e.Data) {
			t.Errorf("data span %q, want %q", got[start:end], e.Data)
		}
	}
}

// TestEventSize: a frame with plain ids fits the size EventSize gives, so
// AppendEvent, which grows its buffer by that much first, never grows it
// again; the longest seqs and times included.
func TestEventSize(t *testing.T) {
	id := "0b7c8a3e-2f1d-4c5e-9a6b-1d2e3f4a5b6c"
	for _, e := range []toolmark.Event{
		{Seq: 1, TurnID: id, MessageID: id, Type: toolmark.EventTextDelta, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Data: json.RawMessage(`{"text":"a"}`)},
		{Seq: -1 << 63, TurnID: id, MessageID: id, Type: toolmark.EventToolCallSuccess, Time: time.Date(-9999, 1, 2, 3, 4, 5, 123456789, time.FixedZone("", -(23*3600+59*60))), Data: json.RawMessage(`{}`)},
		{Seq: 1<<63 - 1, TurnID: "t", Type: toolmark.EventTurnQueued, Time: time.Now()},
	} {
		buf := make([]byte, 0, EventSize(e))
		got, _, _ := AppendEvent(buf, e)
		if len(got) > EventSize(e) || unsafe.SliceData(got) != unsafe.SliceData(buf) {
			t.Errorf("frame of %d bytes, EventSize %d, buffer reallocated: %t: %q", len(got), EventSize(e), unsafe.SliceData(got) != unsafe.SliceData(buf), got)
		}
	}
}

func BenchmarkAppendEvent(b *testing.B) {
	data, _ := json.Marshal(toolmark.TextDeltaData{Text: "a chunk of streamed answer text"})
	e := toolmark.Event{Seq: 42, TurnID: "0b7c8a3e-2f1d-4c5e-9a6b-1d2e3f4a5b6c", MessageID: "1b7c8a3e-2f1d-4c5e-9a6b-1d2e3f4a5b6c",
		Type: toolmark.EventTextDelta, Time: time.Now().UTC(), Data: data}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf, _, _ = AppendEvent(buf[:0], e)
	}
}

// TestEveryEventTypeIsNamed: toolmark's stream says what it writes for every
// event type of the table in the root package; a new type fails here until
// it has a row in names.
func TestEveryEventTypeIsNamed(t *testing.T) {
	for _, typ := range toolmark.EventTypes() {
		n, ok := names[typ]
		if !ok {
			t.Errorf("event type %s has no name in toolmark's stream", typ)
			continue
		}
		if n != string(typ) {
			t.Errorf("%s is written as %q; the native stream names each type as itself", typ, n)
		}
	}
	if len(names) != len(toolmark.EventTypes()) {
		t.Errorf("%d names for %d event types", len(names), len(toolmark.EventTypes()))
	}
}
