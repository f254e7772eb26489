package client

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Frame is one dispatched Server-Sent Events frame: the fields of the lines
// between two blank lines.
//
// ID and Event are the values of the frame's id and event lines ("" when
// absent), Data joins its data lines with "\n" and Retry is the value of a
// valid retry line in milliseconds (0 when absent).
type Frame struct {
	ID    string
	Event string
	Data  string
	Retry int
}

// DefaultMaxFrameBytes is the largest frame a Reader accepts unless told
// otherwise. A snapshot of a long answer is one frame, so it is generous.
const DefaultMaxFrameBytes = 64 << 20

// ErrFrameTooLarge is returned by Reader.Next for a frame longer than the
// reader's limit.
var ErrFrameTooLarge = errors.New("sse: frame too large")

// Reader reads frames from an SSE stream as the HTML standard's event-stream
// parser does: lines end in CRLF, LF or CR; lines that start with ":" are
// comments; "field: value" loses one space after the colon; a frame is
// dispatched at a blank line. A frame made only of comments is skipped. A
// frame still open when the stream ends is never returned: the connection
// was cut before the server finished writing it.
type Reader struct {
	r       *bufio.Reader
	max     int
	started bool
	line    []byte
	skipLF  bool // the last line ended in CR: an LF next belongs to it
}

// NewReader returns a Reader over r with the default frame size limit.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 32<<10), max: DefaultMaxFrameBytes}
}

// SetMaxFrameBytes sets the largest frame Next accepts; n <= 0 restores the
// default.
func (r *Reader) SetMaxFrameBytes(n int) {
	if n <= 0 {
		n = DefaultMaxFrameBytes
	}
	r.max = n
}

// readLine returns the next line without its line ending. At the end of the
// stream it returns io.EOF, with the unterminated rest as the line if there
// was one (the caller must not treat that rest as a complete line).
//
// A CR ends a line at once, and an LF right after it is skipped when it
// arrives, so a frame that ends in CR is dispatched without waiting for
// more input.
func (r *Reader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	for {
		if n := r.r.Buffered(); n > 0 {
			buf, _ := r.r.Peek(n)
			if r.skipLF {
				r.skipLF = false
				if buf[0] == '\n' {
					_, _ = r.r.Discard(1)
					continue
				}
			}
			i := bytes.IndexAny(buf, "\r\n")
			if i < 0 {
				r.line = append(r.line, buf...)
				_, _ = r.r.Discard(n)
			} else {
				r.line = append(r.line, buf[:i]...)
				r.skipLF = buf[i] == '\r'
				_, _ = r.r.Discard(i + 1)
				return r.line, nil
			}
			if len(r.line) > r.max {
				return nil, ErrFrameTooLarge
			}
			continue
		}
		// Nothing buffered: block for at least one more byte.
		if _, err := r.r.Peek(1); err != nil {
			return r.line, err
		}
	}
}

// Next returns the next frame. At the end of the stream it returns io.EOF
// when the stream ended between frames and io.ErrUnexpectedEOF when it ended
// inside one (that frame is discarded). Any other error is the underlying
// reader's.
func (r *Reader) Next() (Frame, error) {
	var f Frame
	var data strings.Builder
	seen := false // any field line in this frame
	hasData := false
	size := 0
	for {
		line, err := r.readLine()
		if err != nil {
			if err == io.EOF {
				if len(line) > 0 || seen {
					return Frame{}, io.ErrUnexpectedEOF
				}
				return Frame{}, io.EOF
			}
			return Frame{}, err
		}
		if !r.started {
			r.started = true
			line = bytes.TrimPrefix(line, []byte("\uFEFF"))
		}
		if len(line) == 0 {
			if !seen {
				continue
			}
			if hasData {
				s := data.String()
				f.Data = s[:len(s)-1]
			}
			return f, nil
		}
		size += len(line)
		if size > r.max {
			return Frame{}, ErrFrameTooLarge
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			data.Write(value)
			data.WriteByte('\n')
			hasData = true
			seen = true
		case "event":
			f.Event = string(value)
			seen = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				f.ID = string(value)
				seen = true
			}
		case "retry":
			if n, ok := parseRetry(value); ok {
				f.Retry = n
				seen = true
			}
		}
	}
}

// parseRetry accepts a non-empty string of ASCII digits.
func parseRetry(v []byte) (int, bool) {
	if len(v) == 0 || len(v) > 9 {
		return 0, false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(string(v))
	return n, err == nil
}

// WriteFrame writes f to w in the event-stream format, ending with a blank
// line. Data is split into one data line per line of it (at CRLF, LF or CR),
// so a reader gets it back with its line endings turned into LF. ID and
// Event may not contain a line ending and ID may not contain NUL.
func WriteFrame(w io.Writer, f Frame) error {
	if strings.ContainsAny(f.ID, "\r\n\x00") || strings.ContainsAny(f.Event, "\r\n") {
		return fmt.Errorf("sse: id or event contains a line ending or NUL")
	}
	var b strings.Builder
	if f.ID != "" {
		b.WriteString("id: " + f.ID + "\n")
	}
	if f.Event != "" {
		b.WriteString("event: " + f.Event + "\n")
	}
	if f.Retry > 0 {
		b.WriteString("retry: " + strconv.Itoa(f.Retry) + "\n")
	}
	if f.Data != "" || b.Len() == 0 {
		data := strings.ReplaceAll(f.Data, "\r\n", "\n")
		data = strings.ReplaceAll(data, "\r", "\n")
		for _, l := range strings.Split(data, "\n") {
			b.WriteString("data: " + l + "\n")
		}
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}
