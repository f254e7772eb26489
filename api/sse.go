package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/sse"
)

// WriteEvent writes e as one Server-Sent Events frame: its seq as the id,
// its type as the event name and the whole event as one line of JSON data.
func WriteEvent(w io.Writer, e toolmark.Event) error {
	if len(e.Data) > 0 && !json.Valid(e.Data) {
		return fmt.Errorf("encoding event %d: data is not valid JSON", e.Seq)
	}
	// Data as json.Marshal writes it (compact, control characters, U+2028
	// and U+2029 escaped) is one line and cannot end the frame early.
	var buf bytes.Buffer
	if err := json.Compact(&buf, e.Data); err != nil && len(e.Data) > 0 {
		return fmt.Errorf("encoding event %d: %w", e.Seq, err)
	}
	e.Data = buf.Bytes()
	frame, _, _ := sse.AppendEvent(nil, e)
	_, err := w.Write(frame)
	return err
}

// WriteComment writes an SSE comment line, which clients ignore and which
// keeps proxies from closing an idle stream.
func WriteComment(w io.Writer, text string) error {
	_, err := w.Write(sse.AppendComment(nil, text))
	return err
}
