package openaiwire_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark/simplifiedagent/llmstream"
	"github.com/toolmark/toolmark/simplifiedagent/openaiwire"
)

type bodyTransport []byte

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(b)), Request: r}, nil
}

// FuzzStream feeds arbitrary bytes as a response stream: no panic, and on
// success the streamed text and fragments add up to the response.
func FuzzStream(f *testing.F) {
	files, _ := filepath.Glob("../testdata/openai/*.sse")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		m, _ := openaiwire.New("http://fuzz.invalid/v1", "", "m")
		m.Client = &http.Client{Transport: bodyTransport(body)}
		var text strings.Builder
		args := map[int]string{}
		ctx := llmstream.WithToolCallDeltaFunc(context.Background(), func(_ context.Context, d llmstream.ToolCallDelta) error {
			args[d.Index] += d.Arguments
			return nil
		})
		resp, err := m.GenerateContent(ctx, nil, llms.WithStreamingFunc(func(_ context.Context, b []byte) error {
			text.Write(b)
			return nil
		}))
		if err != nil {
			return
		}
		if resp.Choices[0].Content != text.String() {
			t.Fatalf("content %q, streamed %q", resp.Choices[0].Content, text.String())
		}
		total := 0
		for _, a := range args {
			total += len(a)
		}
		sum := 0
		for _, c := range resp.Choices[0].ToolCalls {
			sum += len(c.FunctionCall.Arguments)
		}
		if sum != total {
			t.Fatalf("tool arguments %d bytes, streamed %d", sum, total)
		}
	})
}
