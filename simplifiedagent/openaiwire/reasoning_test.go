package openaiwire_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent/llmstream"
)

// TestReasoningShapes: each service's way of streaming thinking is read as
// reasoning, streamed to the reasoning func and never into the text; the
// stop reason and Gemini's signatures reach the response.
func TestReasoningShapes(t *testing.T) {
	tests := []struct {
		file, text, thinking, stop string
		parts                      string // kind:text or kind:callID=signature, in order
	}{
		{"deepseek_thinking_tool.sse", "", "The user wants the weather; call get_weather.", "tool_calls",
			"reasoning_content:The user wants the weather; call get_weather."},
		{"openrouter_reasoning.sse", "Forty-two.", "Thinking about the answer.", "stop", "reasoning:Thinking about the answer."},
		{"magistral_parts.sse", "The answer is 4.", "Two plus two is four.", "stop", "thinking_part:Two plus two is four."},
		{"gemini_signature.sse", "", "", "tool_calls",
			"call_signature:function-call-1712345=CiQBcsjafJ2nF0xXo4nqTsmE4cY0S3GgJ0rZ9Uw5hM2q"},
		{"length_call.sse", "", "", "length", ""},
		{"azure_content_filter.sse", "Here is how", "", "content_filter", ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			srv := httptest.NewServer(sse(fixture(t, tt.file)))
			defer srv.Close()
			var text, thinking strings.Builder
			ctx := llmstream.WithReasoningFunc(context.Background(), func(_ context.Context, s string) error {
				thinking.WriteString(s)
				return nil
			})
			resp, err := mustModel(t, srv.URL).GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")},
				llms.WithStreamingFunc(func(_ context.Context, b []byte) error { text.Write(b); return nil }))
			if err != nil {
				t.Fatal(err)
			}
			ch := resp.Choices[0]
			if text.String() != tt.text || ch.Content != tt.text || thinking.String() != tt.thinking || ch.StopReason != tt.stop {
				t.Errorf("text %q (%q), thinking %q, stop %q; want %q, %q, %q", text.String(), ch.Content, thinking.String(), ch.StopReason,
					tt.text, tt.thinking, tt.stop)
			}
			var parts []string
			for _, p := range llmstream.ReasoningOf(resp) {
				if p.Kind == toolmark.ReasoningCallSignature {
					parts = append(parts, fmt.Sprintf("%s:%s=%s", p.Kind, p.CallID, p.Signature))
				} else {
					parts = append(parts, p.Kind+":"+p.Text)
				}
			}
			if got := strings.Join(parts, "|"); got != tt.parts {
				t.Errorf("reasoning %q, want %q", got, tt.parts)
			}
		})
	}
}

// TestReasoningGoesBack: an assistant message's reasoning goes back in the
// field it came in (reasoning_content, reasoning) and a call's signature on
// the call; thinking parts and other providers' items do not; Mistral's
// model sends no stream_options.
func TestReasoningGoesBack(t *testing.T) {
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		body = nil
		_ = json.Unmarshal(raw, &body)
		sse(fixture(t, "text.sse"))(w, r)
	}))
	defer srv.Close()
	ai := llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{
		llmstream.Part(toolmark.ReasoningPart{Kind: toolmark.ReasoningContent, Text: "think"}),
		llmstream.Part(toolmark.ReasoningPart{Kind: toolmark.ReasoningField, Text: "or"}),
		llmstream.Part(toolmark.ReasoningPart{Kind: toolmark.ReasoningThinkingPart, Text: "not back"}),
		llmstream.Part(toolmark.ReasoningPart{Kind: toolmark.ReasoningThinking, Text: "claude", Signature: "s"}),
		llmstream.Part(toolmark.ReasoningPart{Kind: toolmark.ReasoningCallSignature, CallID: "c1", Signature: "sig1"}),
		llms.ToolCall{ID: "c1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "f", Arguments: "{}"}},
		llms.ToolCall{ID: "c2", Type: "function", FunctionCall: &llms.FunctionCall{Name: "f", Arguments: "{}"}},
	}}
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi"), ai,
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "c1", Content: "ok"}}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "c2", Content: "ok"}}}}
	m := mustModel(t, srv.URL)
	if _, err := m.GenerateContent(context.Background(), msgs); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(body["messages"].([]any)[1])
	want := `{"content":null,"reasoning":"or","reasoning_content":"think","role":"assistant","tool_calls":[` +
		`{"extra_content":{"google":{"thought_signature":"sig1"}},"function":{"arguments":"{}","name":"f"},"id":"c1","type":"function"},` +
		`{"function":{"arguments":"{}","name":"f"},"id":"c2","type":"function"}]}`
	if string(got) != want {
		t.Errorf("assistant message\n%s\nwant\n%s", got, want)
	}
	if _, ok := body["stream_options"]; !ok {
		t.Error("no stream_options for an OpenAI-compatible server")
	}
	m.NoStreamOptions = true
	if _, err := m.GenerateContent(context.Background(), msgs[:1]); err != nil {
		t.Fatal(err)
	}
	if _, ok := body["stream_options"]; ok {
		t.Error("stream_options sent with NoStreamOptions")
	}
}
