package openaiwire_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
)

// BenchmarkLongToolArguments reads a streamed response whose one tool
// call's arguments (a file's text, as a code-writing model sends it) come
// in fragments of 4 bytes: reading it must cost its length, not its length
// squared (ns/fragment stays flat).
func BenchmarkLongToolArguments(b *testing.B) {
	for _, size := range []int{16 << 10, 256 << 10} {
		b.Run(fmt.Sprintf("args=%dKB", size>>10), func(b *testing.B) {
			args := `{"text":"` + strings.Repeat("x", size) + `"}`
			var body strings.Builder
			chunk := func(tc map[string]any) {
				line, err := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{tc}}}}})
				if err != nil {
					b.Fatal(err)
				}
				body.WriteString("data: " + string(line) + "\n\n")
			}
			chunk(map[string]any{"index": 0, "id": "call_1", "type": "function", "function": map[string]any{"name": "write_file", "arguments": ""}})
			n := 0
			for rest := args; rest != ""; n++ {
				k := min(4, len(rest))
				chunk(map[string]any{"index": 0, "function": map[string]any{"arguments": rest[:k]}})
				rest = rest[k:]
			}
			body.WriteString(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n")
			srv := httptest.NewServer(sse([]byte(body.String())))
			defer srv.Close()
			m := mustModel(b, srv.URL)
			msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "write it")}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				resp, err := m.GenerateContent(context.Background(), msgs)
				if err != nil || resp.Choices[0].ToolCalls[0].FunctionCall.Arguments != args {
					b.Fatalf("got %v, %v; want the call with its arguments", resp, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/fragment")
		})
	}
}
