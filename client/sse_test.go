package client

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(tb testing.TB, r io.Reader) ([]Frame, error) {
	tb.Helper()
	sr := NewReader(r)
	var frames []Frame
	for {
		f, err := sr.Next()
		if err != nil {
			if err == io.EOF {
				return frames, nil
			}
			return frames, err
		}
		frames = append(frames, f)
	}
}

func TestReaderNext(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Frame
		wantErr error
	}{
		{"empty", "", nil, nil},
		{"one frame LF", "id: 1\nevent: text_delta\ndata: {}\n\n", []Frame{{ID: "1", Event: "text_delta", Data: "{}"}}, nil},
		{"CRLF", "id: 1\r\nevent: a\r\ndata: x\r\n\r\n", []Frame{{ID: "1", Event: "a", Data: "x"}}, nil},
		{"CR only", "id: 1\revent: a\rdata: x\r\rdata: y\r\r", []Frame{{ID: "1", Event: "a", Data: "x"}, {Data: "y"}}, nil},
		{"mixed endings", "data: a\r\ndata: b\rdata: c\n\r\n", []Frame{{Data: "a\nb\nc"}}, nil},
		{"multi-line data", "data: line1\ndata: line2\ndata:\ndata:  spaced\n\n", []Frame{{Data: "line1\nline2\n\n spaced"}}, nil},
		{"no space after colon", "data:x\nid:7\n\n", []Frame{{ID: "7", Data: "x"}}, nil},
		{"comments skipped", ": keep-alive\n\n: another\ndata: x\n: mid\n\n", []Frame{{Data: "x"}}, nil},
		{"retry frame", "retry: 1000\n\nid: 1\ndata: a\n\n", []Frame{{Retry: 1000}, {ID: "1", Data: "a"}}, nil},
		{"bad retry ignored", "retry: 10x\ndata: a\n\n", []Frame{{Data: "a"}}, nil},
		{"field without colon", "data\n\n", []Frame{{Data: ""}}, nil},
		{"unknown field ignored", "foo: bar\ndata: a\n\n", []Frame{{Data: "a"}}, nil},
		{"unknown field only", "foo: bar\n\n", nil, nil},
		{"id with NUL ignored", "id: a\x00b\ndata: a\n\n", []Frame{{Data: "a"}}, nil},
		{"BOM at start", "\uFEFFdata: a\n\n", []Frame{{Data: "a"}}, nil},
		{"blank lines between", "\n\n\ndata: a\n\n\n\ndata: b\n\n", []Frame{{Data: "a"}, {Data: "b"}}, nil},
		{"colon in value", "data: {\"a\":\"b: c\"}\n\n", []Frame{{Data: `{"a":"b: c"}`}}, nil},
		{"partial frame at EOF dropped", "data: a\n\ndata: b\n", []Frame{{Data: "a"}}, io.ErrUnexpectedEOF},
		{"partial line at EOF dropped", "data: a\n\nid: 2\ndata: {\"seq\":2", []Frame{{Data: "a"}}, io.ErrUnexpectedEOF},
		{"partial comment at EOF", "data: a\n\n: keep", []Frame{{Data: "a"}}, io.ErrUnexpectedEOF},
		{"frame without final blank line", "data: a\n", nil, io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []struct {
				name string
				r    io.Reader
			}{
				{"whole", strings.NewReader(tt.in)},
				{"byte by byte", iotest.OneByteReader(strings.NewReader(tt.in))},
			} {
				got, err := readAll(t, r.r)
				if !errors.Is(err, tt.wantErr) && !(err == nil && tt.wantErr == nil) {
					t.Fatalf("%s: err %v, want %v", r.name, err, tt.wantErr)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s: got %#v, want %#v", r.name, got, tt.want)
				}
			}
		})
	}
}

func TestReaderFrameTooLarge(t *testing.T) {
	r := NewReader(strings.NewReader("data: " + strings.Repeat("x", 100) + "\n\n"))
	r.SetMaxFrameBytes(50)
	if _, err := r.Next(); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("got %v, want %v", err, ErrFrameTooLarge)
	}
}

func TestReaderLongLine(t *testing.T) {
	long := strings.Repeat("ab", 100_000) // longer than the bufio buffer
	got, err := readAll(t, strings.NewReader("data: "+long+"\r\n\r\n"))
	if err != nil || len(got) != 1 || got[0].Data != long {
		t.Fatalf("got %d frames, err %v", len(got), err)
	}
}

func TestWriteFrame(t *testing.T) {
	tests := []struct {
		name string
		f    Frame
		want string
	}{
		{"event", Frame{ID: "3", Event: "text_delta", Data: `{"a":1}`}, "id: 3\nevent: text_delta\ndata: {\"a\":1}\n\n"},
		{"multi-line", Frame{Data: "a\r\nb\rc\nd"}, "data: a\ndata: b\ndata: c\ndata: d\n\n"},
		{"retry", Frame{Retry: 1000}, "retry: 1000\n\n"},
		{"empty", Frame{}, "data: \n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteFrame(&b, tt.f); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got %q, want %q", b.String(), tt.want)
			}
		})
	}
	if err := WriteFrame(io.Discard, Frame{ID: "a\nb"}); err == nil {
		t.Error("WriteFrame accepted an id with a newline")
	}
}

// normalised is what a reader returns for a frame written by WriteFrame.
func normalised(f Frame) Frame {
	f.Data = strings.ReplaceAll(f.Data, "\r\n", "\n")
	f.Data = strings.ReplaceAll(f.Data, "\r", "\n")
	return f
}

// FuzzSSEParse checks that the reader never panics on any input and that
// frames written by WriteFrame are read back as they were (line endings in
// Data turned into LF), whatever the line ending style of the stream and
// however the bytes are split across reads.
func FuzzSSEParse(f *testing.F) {
	f.Add("id: 1\nevent: a\ndata: x\n\n", "1", "text_delta", "hello\nworld", 0)
	f.Add("data: a\r\n\r\n: c\rdata", "", "", "", 1000)
	f.Add("\uFEFFretry: 5\n\n", "7", "x", "a\r\nb\rc", 3)
	f.Fuzz(func(t *testing.T, raw, id, event, data string, retry int) {
		// No panic on arbitrary input, read whole or byte by byte.
		_, _ = readAll(t, strings.NewReader(raw))
		_, _ = readAll(t, iotest.OneByteReader(strings.NewReader(raw)))

		if retry < 0 || retry > 999_999_999 {
			retry = 0
		}
		fr := Frame{ID: id, Event: event, Data: data, Retry: retry}
		var b bytes.Buffer
		if err := WriteFrame(&b, fr); err != nil {
			return // an id or event that cannot be written
		}
		if strings.HasPrefix(fr.ID, "\uFEFF") || fr.ID == "" && fr.Event == "" && fr.Retry == 0 && strings.HasPrefix(fr.Data, "\uFEFF") {
			return // a BOM at the start of the stream is dropped by design
		}
		stream := b.String() + b.String() + ": keep-alive\n\n"
		for _, ending := range []string{"\n", "\r\n", "\r"} {
			s := strings.ReplaceAll(stream, "\n", ending)
			got, err := readAll(t, iotest.HalfReader(strings.NewReader(s)))
			if err != nil {
				t.Fatalf("ending %q: %v", ending, err)
			}
			want := []Frame{normalised(fr), normalised(fr)}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("ending %q: got %#v, want %#v", ending, got, want)
			}
			// Cut before the final blank line: the frame is not delivered.
			cut := strings.TrimSuffix(b.String(), "\n")
			cut = strings.ReplaceAll(cut, "\n", ending)
			{
				got, err = readAll(t, strings.NewReader(cut))
				if len(got) != 0 || !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("ending %q: partial frame delivered: %#v, %v", ending, got, err)
				}
			}
		}
	})
}
