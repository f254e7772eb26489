package demo

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
)

// TestTextPieces streams texts through text and checks the pieces: three
// words each with their trailing space or newline, the last what remains,
// the whole the text, and no piece's room reaching the next (a handler
// appending to one must not change what follows).
func TestTextPieces(t *testing.T) {
	m := &Model{}
	for _, s := range []string{
		"",
		"one",
		"one two three",
		"one two three ",
		"one two three four five six seven",
		"héllo wörld ça va\nbien sûr, mon «ami» 🙂 fin",
		"a\nb\nc\nd",
	} {
		var got []string
		var b strings.Builder
		opts := &llms.CallOptions{StreamingFunc: func(_ context.Context, chunk []byte) error {
			got = append(got, string(chunk))
			_ = append(chunk, "XXXXXXXX"...) // must not reach the next piece
			b.Write(chunk)
			return nil
		}}
		resp, err := m.text(context.Background(), opts, s)
		if err != nil {
			t.Fatal(err)
		}
		if b.String() != s || resp.Choices[0].Content != s {
			t.Errorf("%q: streamed %q, answered %q", s, b.String(), resp.Choices[0].Content)
		}
		if s == "" && len(got) != 0 {
			t.Errorf("empty text streamed %q", got)
		}
		for i, p := range got {
			seps := strings.Count(p, " ") + strings.Count(p, "\n")
			last := i == len(got)-1
			if !last && (seps != 3 || !strings.ContainsAny(p[len(p)-1:], " \n")) {
				t.Errorf("%q: piece %d is %q, want three words with their separators", s, i, p)
			}
			if last && seps > 3 {
				t.Errorf("%q: last piece %q holds more than three words", s, p)
			}
		}
	}
}
