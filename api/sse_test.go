package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
)

func TestWriteEvent(t *testing.T) {
	tests := []struct {
		name string
		data string
	}{
		{"plain", `{"text":"hello"}`},
		{"newlines and separators in text", `{"text":"a\nb\r\nc\u2028d\u2029"}`},
		{"markup", `{"markup":"<ToolCall type=\"x\" status=\"running\" toolCallId=\"c\">"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := toolmark.Event{Seq: 7, TurnID: "t", MessageID: "m", Type: toolmark.EventTextDelta,
				Time: time.Unix(0, 0).UTC(), Data: json.RawMessage(tt.data)}
			var buf bytes.Buffer
			if err := WriteEvent(&buf, e); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if !strings.HasPrefix(out, "id: 7\nevent: text_delta\ndata: ") || !strings.HasSuffix(out, "\n\n") {
				t.Fatalf("got frame %q", out)
			}
			if n := strings.Count(out, "\n"); n != 4 {
				t.Fatalf("got %d newlines in %q, want 4 (three lines and the blank one)", n, out)
			}
			var back toolmark.Event
			line := strings.TrimSuffix(strings.SplitN(out, "data: ", 2)[1], "\n\n")
			if err := json.Unmarshal([]byte(line), &back); err != nil {
				t.Fatal(err)
			}
			var a, b any
			_ = json.Unmarshal(e.Data, &a)
			_ = json.Unmarshal(back.Data, &b)
			if back.Seq != e.Seq || back.Type != e.Type {
				t.Errorf("got %+v, want %+v", back, e)
			}
		})
	}
}

// FuzzWriteEvent: whatever text an event carries, its frame is exactly
// three field lines and a blank line, and its data decodes back.
func FuzzWriteEvent(f *testing.F) {
	for _, s := range []string{"", "a\nb", "\r\r\n", "data: x\n\nid: 9", "\u2028", "\xff\xfe", "<ToolCall>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		data, _ := json.Marshal(toolmark.TextDeltaData{Text: text})
		var buf bytes.Buffer
		if err := WriteEvent(&buf, toolmark.Event{Seq: 1, Type: toolmark.EventTextDelta, Data: data}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if strings.Count(out, "\n") != 4 || strings.Contains(out, "\r") || !strings.HasSuffix(out, "\n\n") {
			t.Fatalf("frame %q is not three lines and a blank line", out)
		}
		var back toolmark.Event
		if err := json.Unmarshal([]byte(strings.TrimSuffix(strings.SplitN(out, "data: ", 2)[1], "\n\n")), &back); err != nil {
			t.Fatal(err)
		}
		var d toolmark.TextDeltaData
		if err := json.Unmarshal(back.Data, &d); err != nil {
			t.Fatal(err)
		}
		if want := string([]rune(text)); d.Text != want { // one U+FFFD per invalid byte, as encoding/json writes
			t.Fatalf("got %q, want %q", d.Text, want)
		}
	})
}

// FuzzParseCursor: a cursor is accepted only as a whole number ≥ 0, and
// the error message never echoes more than a bounded, valid-UTF-8 prefix.
func FuzzParseCursor(f *testing.F) {
	for _, s := range []string{"0", "17", "-1", "abc", " 5 ", "9223372036854775808", "1e3", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseCursor(s, "after")
		if err == nil {
			if n < 0 {
				t.Fatalf("accepted negative cursor %d from %q", n, s)
			}
			return
		}
		msg := toolmark.ErrorMessage(err)
		if len(msg) > 300 || !strings.Contains(msg, "after") || toolmark.ErrorCode(err) != toolmark.EINVALID {
			t.Fatalf("bad error for %q: %q", s, msg)
		}
	})
}

// TestRecoverPanics checks that a panicking handler answers a JSON 500 and
// the server goes on serving.
func TestRecoverPanics(t *testing.T) {
	s := New(Config{})
	h := s.recoverPanics(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/boom" {
			panic("boom")
		}
		w.WriteHeader(204)
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/boom")
	if err != nil {
		t.Fatal(err)
	}
	var body errorBody
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != 500 || body.Error.Code != "internal" || body.Error.Message != "internal error" {
		t.Errorf("got %d %+v, want 500 internal error", resp.StatusCode, body)
	}
	resp, err = http.Get(srv.URL + "/ok")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 {
		t.Errorf("after a panic: got %d, want 204", resp.StatusCode)
	}
}

// FuzzDecodeJSON: any body gets either a decoded object or a 4xx-coded
// error, never a panic.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"content":"x"}`, `{`, `{"content":"x"} {}`, `{"extra":1}`, "{\"content\":\"\xff\"}", `[]`, `null`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest("POST", "/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		var dst struct {
			Content string `json:"content"`
		}
		err := decodeJSON(httptest.NewRecorder(), r, 1<<10, &dst)
		if err != nil {
			if code := toolmark.ErrorCode(err); StatusOf(code) >= 500 {
				t.Fatalf("body %q: got code %s", body, code)
			}
		}
	})
}

func TestTitleFrom(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"How do clients resume?\nmore", "How do clients resume?"},
		{"Research how cancellation works; what happens after a crash and how long does recovery take", "Research how cancellation works; what happens after a crash…"},
		{strings.Repeat("x", 70), strings.Repeat("x", 60) + "…"},
	} {
		if got := titleFrom(tt.in); got != tt.want {
			t.Errorf("titleFrom(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
