package api

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/fanout"
)

// TestGzipPiecesShared: two gzip'd streams of the same frames, one with a
// keep-alive between them, each decode (by the standard library's reader)
// to exactly what they were given, and both sent the same compressed bytes
// of each frame: compressed once, by the first.
func TestGzipPiecesShared(t *testing.T) {
	var frames []fanout.Frame
	for i, text := range []string{"a", strings.Repeat("long answer <b>&amp; ", 200), ""} {
		data, _ := json.Marshal(toolmark.TextDeltaData{Text: text})
		frames = append(frames, fanout.NewFrame(toolmark.Event{Seq: int64(i + 1), TurnID: "t", MessageID: "m", Type: toolmark.EventTextDelta, Time: time.Unix(1, 0).UTC(), Data: data}, nil))
	}
	var a, b gzipPieces
	var za, zb []byte
	var want []byte
	for _, f := range frames {
		za = a.appendFrame(za, f)
		zb = b.appendText(zb, []byte(keepAlive))
		zb = b.appendFrame(zb, f)
		want = append(want, f.SSE()...)
	}
	za, zb = a.appendEnd(za), b.appendEnd(zb)
	if got := mustGunzip(t, za); got != string(want) {
		t.Errorf("first stream decodes to %q, want %q", got, want)
	}
	var wantB string
	for _, f := range frames {
		wantB += keepAlive + string(f.SSE())
	}
	if got := mustGunzip(t, zb); got != wantB {
		t.Errorf("second stream decodes to %q, want %q", got, wantB)
	}
	for _, f := range frames {
		p1, p2 := f.Encoded(fanout.EncodingSSEDeflate, deflateSSE), f.Encoded(fanout.EncodingSSEDeflate, deflateSSE)
		if unsafe.SliceData(p1) != unsafe.SliceData(p2) || !bytes.Contains(za, p1) || !bytes.Contains(zb, p1) {
			t.Errorf("frame %d: its compressed piece is not one, shared by both streams", f.Event.Seq)
		}
	}
}

func mustGunzip(tb testing.TB, z []byte) string {
	tb.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		tb.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatalf("decoding: %v", err)
	}
	return string(b)
}

// BenchmarkGzipFollowers writes a turn's text frames to 8 gzip'd
// followers: each frame compressed once for all of them (the frame's
// memo), against once per follower (as each stream's own gzip writer
// did), the SSE bytes built once either way. It reports the CPU per frame and follower.
func BenchmarkGzipFollowers(b *testing.B) {
	const followers = 8
	data, _ := json.Marshal(toolmark.TextDeltaData{Text: "a chunk of streamed answer text, as the demo model writes it"})
	e := toolmark.Event{Seq: 1, TurnID: "0b7c8a3e-2f1d-4c5e-9a6b-1d2e3f4a5b6c", MessageID: "1b7c8a3e-2f1d-4c5e-9a6b-1d2e3f4a5b6c", Type: toolmark.EventTextDelta, Time: time.Now().UTC(), Data: data}
	for _, tt := range []struct {
		name   string
		shared bool
	}{{"shared", true}, {"per-follower", false}} {
		b.Run(tt.name, func(b *testing.B) {
			var zs [followers]gzipPieces
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				f := fanout.NewFrame(e, nil)
				for i := range zs {
					if tt.shared {
						buf = zs[i].appendFrame(buf[:0], f)
					} else {
						buf = zs[i].appendText(buf[:0], f.SSE()) // compressed for this stream alone
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*followers), "ns/frame-follower")
		})
	}
}
