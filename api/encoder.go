package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/fanout"
)

// One turn, several wire protocols: a turn is written, committed and fanned
// out once (fanout.Hub), and each stream that follows it gets an encoder of
// its protocol, chosen from encoders, that turns the turn's frames into the
// protocol's bytes. An encoder is stateful and belongs to one stream (the
// AI SDK's and AG-UI's streams open and close a part per text block and per
// tool call). Adding a protocol is one encoder file and one route.
type encoder interface {
	// write writes the wire form of a batch of frames, in seq order.
	write(w io.Writer, frames []fanout.Frame) error
	// end writes what closes the stream once the turn is over (nothing for
	// a protocol whose last event says so).
	end(w io.Writer) error
}

// encoders is the registry of the protocols a turn's stream can speak, by
// name: each makes a fresh encoder for one stream of turn t; run is the id
// the client gave the run (AG-UI's runId), "" for the others. The rendered
// HTML stream (render.go) shares the turn's live view rather than encoding
// frame by frame, so it is not one of them.
var encoders = map[string]func(t toolmark.Turn, run string) encoder{
	"events": func(toolmark.Turn, string) encoder { return eventsEncoder{} },
	"ai-sdk": func(t toolmark.Turn, _ string) encoder { return newAISDKEncoder(t) },
	"ag-ui":  func(t toolmark.Turn, run string) encoder { return newAGUIEncoder(t, run) },
}

// eventsEncoder writes toolmark's own event stream: each frame's SSE bytes,
// built once when the frame was published and shared by every follower.
// It maps every event type alike, as it is.
type eventsEncoder struct{}

func (eventsEncoder) write(w io.Writer, frames []fanout.Frame) error {
	for _, f := range frames {
		if _, err := w.Write(f.SSE()); err != nil {
			return err
		}
	}
	return nil
}

func (eventsEncoder) end(io.Writer) error { return nil }

// appendSSEData appends v as one SSE data line of JSON, the framing of the
// protocols whose events carry no id or name. A value that does not marshal
// (none of the encoders' do) is left out rather than breaking the stream.
func appendSSEData(buf []byte, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return buf
	}
	buf = append(buf, "data: "...)
	buf = append(buf, b...)
	return append(buf, "\n\n"...)
}

// decodeProtocolJSON decodes the body of another protocol's request into
// dst, checked as decodeJSON checks a body but keeping what dst has no
// field for: such clients send fields (protocolVersion, tools, metadata…)
// toolmark has no use for.
func decodeProtocolJSON(w http.ResponseWriter, r *http.Request, max int64, dst any) error {
	var raw json.RawMessage
	if err := decodeJSON(w, r, max, &raw); err != nil {
		return err
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return toolmark.Errorf(toolmark.EINVALID, "malformed JSON: %s", jsonProblem(err))
	}
	return nil
}

// applyMapped hands each frame with a row in table, and its typed payload,
// to that row's function; a type without a row is newer than the protocol,
// and its client never sees it.
func applyMapped[E any](e E, frames []fanout.Frame, table map[toolmark.EventType]func(E, fanout.Frame, any)) error {
	for _, f := range frames {
		fn := table[f.Event.Type]
		if fn == nil {
			continue
		}
		d, err := f.Payload()
		if err != nil {
			return err
		}
		fn(e, f, d)
	}
	return nil
}

// protocolStream writes turn t from its start through enc, with the
// response head every stream has plus extra (header, value pairs).
func (s *Server) protocolStream(w http.ResponseWriter, r *http.Request, t toolmark.Turn, enc encoder, extra ...string) {
	h := w.Header()
	setStreamHead(h, t)
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(s.writeBy())
	w.WriteHeader(http.StatusOK)
	s.cfg.Metrics.StreamOpened()
	defer s.cfg.Metrics.StreamClosed()
	err := s.encodeStream(r.Context(), w, rc, t, 0, enc)
	if err != nil && !errors.Is(err, errStreamClosed) && r.Context().Err() == nil {
		s.log.Debug("protocol stream ended", "turn", t.ID, "err", err)
	}
}

// setStreamHead sets the head of every event stream of turn t.
func setStreamHead(h http.Header, t toolmark.Turn) {
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Turn-Id", t.ID)
}
