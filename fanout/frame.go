package fanout

import (
	"fmt"
	"sync"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/sse"
)

// Frame is one committed event as its followers on this replica get it:
// the event, its payload typed (one of the toolmark.*Data values), and
// nothing encoded. Each stream encodes the frames it follows in its own
// protocol; an encoding that depends on the frame alone (toolmark's SSE
// frame, that frame deflated) is computed once per frame, by the first
// follower that needs it, and shared with every other follower, whatever
// their number (Encoded). A frame is a value: its copies share that memo.
type Frame struct {
	Event toolmark.Event
	Data  any
	// Tag is, for a tool call the runner committed, the tag its markup was
	// formatted from (toolmark.Draft.Tag): the live view takes it as it is
	// instead of parsing the markup again.
	Tag  any
	memo *frameMemo
}

// Encoding names an encoding of a frame that depends on the frame alone,
// kept once computed (Frame.Encoded).
type Encoding uint8

// The encodings a frame keeps.
const (
	// EncodingSSE is the frame in toolmark's event stream (Frame.SSE).
	EncodingSSE Encoding = iota
	// EncodingSSEDeflate is that SSE frame deflated on its own, a piece
	// of any gzip'd event stream (package api).
	EncodingSSEDeflate
	numEncodings
)

// frameMemo holds a frame's encodings, each computed once.
type frameMemo struct {
	once [numEncodings]sync.Once
	enc  [numEncodings][]byte
}

// NewFrame returns the frame of a committed event whose typed payload is
// data; nil leaves the payload to be decoded from e.Data when a follower
// needs it (an event read from the store).
func NewFrame(e toolmark.Event, data any) Frame {
	return Frame{Event: e, Data: data, memo: new(frameMemo)}
}

// Encoded returns the frame's encoding k, made by encode the first time it
// is asked for and kept (by every copy of the frame) for the next callers.
// Every caller of an encoding passes the same encode; it must not change
// the frame. A frame not made by NewFrame keeps nothing. The bytes
// returned are shared: not to be modified.
func (f Frame) Encoded(k Encoding, encode func(Frame) []byte) []byte {
	m := f.memo
	if m == nil {
		return encode(f)
	}
	m.once[k].Do(func() { m.enc[k] = encode(f) })
	return m.enc[k]
}

// SSE returns the frame in toolmark's event stream (internal/sse), built
// once for every follower.
func (f Frame) SSE() []byte { return f.Encoded(EncodingSSE, appendSSE) }

func appendSSE(f Frame) []byte {
	b, _, _ := sse.AppendEvent(nil, f.Event)
	return b
}

// size is what the frame counts for in a tail's bound: the most its SSE
// frame can take, known without building it.
func (f Frame) size() int { return sse.EventSize(f.Event) }

// Payload returns the frame's typed payload, decoding the event's data when
// the frame was built without it.
func (f Frame) Payload() (any, error) {
	if f.Data != nil {
		return f.Data, nil
	}
	d, err := toolmark.DecodeData(f.Event.Type, f.Event.Data)
	if err != nil {
		return nil, fmt.Errorf("event %d: %w", f.Event.Seq, err)
	}
	return d, nil
}
