package api

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/toolmark/toolmark"
)

// WriteEvent writes e as one Server-Sent Events frame: its seq as the id,
// its type as the event name and the whole event as one line of JSON data.
func WriteEvent(w io.Writer, e toolmark.Event) error {
	data, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encoding event %d: %w", e.Seq, err)
	}
	// json.Marshal escapes control characters, U+2028 and U+2029, so the
	// data is one line and cannot end the frame early.
	_, err = fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Type, data)
	return err
}

// WriteComment writes an SSE comment line, which clients ignore and which
// keeps proxies from closing an idle stream.
func WriteComment(w io.Writer, text string) error {
	_, err := fmt.Fprintf(w, ": %s\n\n", text)
	return err
}
