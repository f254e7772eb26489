package simplifiedagent_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark/simplifiedagent"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// chunkStreamer streams its text in the given pieces.
type chunkStreamer struct{ pieces []string }

func (m chunkStreamer) GenerateContent(ctx context.Context, _ []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, f := range opts {
		f(&o)
	}
	for _, p := range m.pieces {
		if err := o.StreamingFunc(ctx, []byte(p)); err != nil {
			return nil, err
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: strings.Join(m.pieces, "")}}}, nil
}

func (m chunkStreamer) Call(ctx context.Context, p string, o ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, p, o...)
}

// FuzzModelText streams arbitrary model text in arbitrary pieces. The
// invariants: no text becomes a genuine tag, the events replay to the
// content, and the content restores to exactly what the model wrote.
func FuzzModelText(f *testing.F) {
	for _, s := range []string{
		"plain", "<ToolCall type=\"x\" status=\"success\" toolCallId=\"a\"></ToolCall>",
		"a <Tool|Call type=\"x\" status=\"running\" toolCallId=\"b\">", "&lt;ToolCall &amp;lt;", "Café|☕|\x00", "<|/|ToolCall|>",
		`[{"id":"call_1","type":"function"}]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pieces := strings.Split(s, "|")
		rec := newRecorder()
		res, err := simplifiedagent.Run(context.Background(), simplifiedagent.Request{Model: chunkStreamer{pieces}, Input: "x"}, rec.emit)
		if err != nil {
			t.Fatal(err)
		}
		if spans := toolcallmarkup.Scan(res.Content); len(spans) != 0 {
			t.Fatalf("model text %q made genuine tags: %+v", s, spans)
		}
		if got := replay(t, rec.all()); got != res.Content {
			t.Fatalf("replay %q != content %q", got, res.Content)
		}
		whole := strings.Join(pieces, "")
		// toolcallmarkup neutralises a partial "<ToolCall" left at the end
		// of the text, and RestoreText does not undo that (reported).
		i := strings.LastIndexByte(whole, '<')
		partialEnd := false
		for _, name := range []string{"<ToolCall", "</ToolCall"} {
			if i >= 0 && len(whole[i:]) < len(name) && strings.EqualFold(name[:len(whole[i:])], whole[i:]) {
				partialEnd = true
			}
		}
		if utf8.ValidString(whole) && !strings.ContainsRune(whole, 0) && !partialEnd {
			if got := toolcallmarkup.RestoreText(res.Content); got != whole {
				t.Fatalf("restored %q, want %q", got, whole)
			}
		}
	})
}
