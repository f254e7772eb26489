package openaiwire_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent/llmstream"
	"github.com/toolmark/toolmark/simplifiedagent/modelerr"
	"github.com/toolmark/toolmark/simplifiedagent/openaiwire"
)

func fixture(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile("../testdata/openai/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func mustModel(tb testing.TB, url string) *openaiwire.Model {
	tb.Helper()
	m, err := openaiwire.New(url, "sk-test", "test-model")
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func sse(body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(body)
	}
}

// TestStreamSeparatesTextAndToolCalls: text goes to the streaming func,
// argument fragments to the delta func, parallel calls by index.
func TestStreamSeparatesTextAndToolCalls(t *testing.T) {
	srv := httptest.NewServer(sse(fixture(t, "parallel_1.sse")))
	defer srv.Close()
	var text strings.Builder
	args := map[int]string{}
	ids := map[int]string{}
	ctx := llmstream.WithToolCallDeltaFunc(context.Background(), func(_ context.Context, d llmstream.ToolCallDelta) error {
		args[d.Index] += d.Arguments
		if d.ID != "" {
			ids[d.Index] = d.ID
		}
		return nil
	})
	resp, err := mustModel(t, srv.URL).GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")},
		llms.WithStreamingFunc(func(_ context.Context, b []byte) error { text.Write(b); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	if text.Len() != 0 {
		t.Errorf("tool-call chunks reached the text func: %q", text.String())
	}
	if args[0] != `{"query":"cancellation"}` || args[1] != `{"query":"crash recovery"}` || ids[0] != "call_alpha" || ids[1] != "call_beta" {
		t.Errorf("deltas %v %v", ids, args)
	}
	tc := resp.Choices[0].ToolCalls
	if len(tc) != 2 || tc[1].ID != "call_beta" || tc[1].FunctionCall.Arguments != `{"query":"crash recovery"}` || resp.Choices[0].StopReason != "tool_calls" {
		t.Errorf("tool calls %+v", tc)
	}
}

func TestTextThatLooksLikeToolCalls(t *testing.T) {
	srv := httptest.NewServer(sse(fixture(t, "text_json.sse")))
	defer srv.Close()
	var text strings.Builder
	called := false
	ctx := llmstream.WithToolCallDeltaFunc(context.Background(), func(context.Context, llmstream.ToolCallDelta) error {
		called = true
		return nil
	})
	resp, err := mustModel(t, srv.URL).GenerateContent(ctx, nil,
		llms.WithStreamingFunc(func(_ context.Context, b []byte) error { text.Write(b); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	if called || !strings.HasPrefix(text.String(), `[{"id":"call_1"`) || text.String() != resp.Choices[0].Content {
		t.Errorf("text %q, delta func called %v", text.String(), called)
	}
	if resp.Choices[0].GenerationInfo["TotalTokens"] != 123 {
		t.Errorf("usage %v", resp.Choices[0].GenerationInfo)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		wantErr string
		status  int
		code    string
	}{
		{"bad request", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			io.WriteString(w, `{"error":{"message":"Invalid 'messages': empty array.","type":"invalid_request_error","param":"messages","code":"empty_array"}}`)
		}, "HTTP 400 invalid_request_error: empty_array: Invalid 'messages': empty array.", 400, toolmark.EBADREQUEST},
		{"unauthorized", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(401)
			io.WriteString(w, `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","code":"invalid_api_key"}}`)
		}, "HTTP 401", 401, toolmark.EAUTH},
		{"ollama", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(404)
			io.WriteString(w, `{"error":"model \"llama9\" not found, try pulling it first"}`)
		}, `HTTP 404 model "llama9" not found`, 404, toolmark.EBADREQUEST},
		{"vllm", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(400)
			io.WriteString(w, `{"object":"error","message":"This model's maximum context length is 4096 tokens.","type":"BadRequestError","param":null,"code":400}`)
		}, "HTTP 400 BadRequestError: 400: This model's maximum context length", 400, toolmark.ECONTEXTTOOLONG},
		{"vllm in stream", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"object":"error","message":"Internal server error","type":"InternalServerError","param":null,"code":500}`+"\n\n")
		}, "error in stream: InternalServerError: 500: Internal server error", 0, toolmark.ESERVICEFAILED},
		{"gemini", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(400)
			io.WriteString(w, `[{"error":{"code":400,"message":"Function call is missing a thought_signature in functionCall parts.","status":"INVALID_ARGUMENT"}}]`)
		}, "HTTP 400 400: Function call is missing a thought_signature", 400, toolmark.EBADREQUEST},
		{"deepseek balance", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(402)
			io.WriteString(w, `{"error":{"message":"Insufficient Balance","type":"unknown_error","param":null,"code":"invalid_request_error"}}`)
		}, "HTTP 402", 402, toolmark.ECREDIT},
		{"plain 502", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "Bad Gateway", 502)
		}, "HTTP 502 Bad Gateway", 502, toolmark.ESERVICEFAILED},
		{"error mid-stream", sse(fixture(t, "error_mid.sse")), "error in stream: server_error", 0, toolmark.ESERVICEFAILED},
		{"stream cut", sse(fixture(t, "stream_cut.sse")), "stream ended", 0, toolmark.ESTREAMCUT},
		{"garbage", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {not json\n\n")
		}, "bad chunk", 0, toolmark.EBADRESPONSE},
		{"rate limited", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(429)
			io.WriteString(w, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`)
		}, "HTTP 429", 429, toolmark.ERATELIMITED},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			_, err := mustModel(t, srv.URL).GenerateContent(context.Background(), nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got %v, want an error containing %q", err, tt.wantErr)
			}
			var me *modelerr.Error
			if !errors.As(err, &me) || me.Status != tt.status || me.Code != tt.code {
				t.Errorf("got %#v, want a modelerr.Error with status %d and code %s", err, tt.status, tt.code)
			}
			if got := toolmark.ErrorMessage(err); got != toolmark.ModelErrorText(tt.code) || strings.Contains(got, srv.URL) {
				t.Errorf("message %q, want %q", got, toolmark.ModelErrorText(tt.code))
			}
		})
	}
}

// TestOneAttempt: the model makes one request and leaves retries to the
// agent loop, with the wait the server asked for.
func TestOneAttempt(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Retry-After", "2")
		w.WriteHeader(429)
	}))
	defer srv.Close()
	_, err := mustModel(t, srv.URL).GenerateContent(context.Background(), nil)
	var me *modelerr.Error
	if !errors.As(err, &me) || me.Status != 429 || !me.Retryable() || me.RetryAfter != 2*time.Second || n.Load() != 1 {
		t.Errorf("got %v after %d requests, want one retryable 429 asking for 2 s", err, n.Load())
	}
}

// TestRequest checks the wire form of messages, tools and options.
func TestRequest(t *testing.T) {
	var body map[string]any
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		json.NewDecoder(r.Body).Decode(&body)
		sse(fixture(t, "text.sse"))(w, r)
	}))
	defer srv.Close()
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "be brief"),
		llms.TextParts(llms.ChatMessageTypeHuman, "search"),
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{llms.ToolCall{ID: "c1", Type: "function",
			FunctionCall: &llms.FunctionCall{Name: "search_documents", Arguments: `{"query":"q"}`}}}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "c1", Name: "search_documents", Content: "Found 0"}}},
	}
	_, err := mustModel(t, srv.URL).GenerateContent(context.Background(), msgs,
		llms.WithTools([]llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "search_documents",
			Parameters: map[string]any{"type": "object"}}}}),
		llms.WithTemperature(0.2), llms.WithMaxTokens(100))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(body["messages"])
	want := `[{"content":"be brief","role":"system"},{"content":"search","role":"user"},{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"query\":\"q\"}","name":"search_documents"},"id":"c1","type":"function"}]},{"content":"Found 0","role":"tool","tool_call_id":"c1"}]`
	if string(got) != want {
		t.Errorf("messages:\n%s\nwant:\n%s", got, want)
	}
	if auth != "Bearer sk-test" || body["stream"] != true || body["temperature"] != 0.2 || body["max_tokens"] != 100.0 || body["model"] != "test-model" {
		t.Errorf("auth %q body %v", auth, body)
	}
	if tools, _ := json.Marshal(body["tools"]); !strings.Contains(string(tools), `"name":"search_documents"`) {
		t.Errorf("tools %s", tools)
	}
}

// TestNonStreamingServer: a server that ignores "stream" and answers with
// one JSON object still reports text and tool calls.
func TestNonStreamingServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Checking.","tool_calls":[{"id":"c9","type":"function","function":{"name":"search_documents","arguments":"{\"query\":\"a\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`)
	}))
	defer srv.Close()
	var text, args string
	ctx := llmstream.WithToolCallDeltaFunc(context.Background(), func(_ context.Context, d llmstream.ToolCallDelta) error {
		args += d.Arguments
		return nil
	})
	resp, err := mustModel(t, srv.URL).GenerateContent(ctx, nil,
		llms.WithStreamingFunc(func(_ context.Context, b []byte) error { text += string(b); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	if text != "Checking." || args != `{"query":"a"}` || resp.Choices[0].ToolCalls[0].ID != "c9" {
		t.Errorf("text %q args %q resp %+v", text, args, resp.Choices[0])
	}
}

func TestCancelDuringStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"slow"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	_, err := mustModel(t, srv.URL).GenerateContent(ctx, nil,
		llms.WithStreamingFunc(func(context.Context, []byte) error { cancel(); return nil }))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

// TestIdleTimeout: a server that stops sending without closing ends the
// call with ErrStreamCut.
func TestIdleTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"then silence"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	m := mustModel(t, srv.URL)
	m.IdleTimeout = 100 * time.Millisecond
	_, err := m.GenerateContent(context.Background(), nil)
	if !errors.Is(err, openaiwire.ErrStreamCut) || !strings.Contains(err.Error(), "nothing received") || toolmark.ErrorCode(err) != toolmark.ETIMEOUT {
		t.Errorf("got %v, want a timeout after the idle timeout", err)
	}
}

// TestToolCallsWithoutIndex: servers that send each call whole and without
// an index still yield separate calls.
func TestToolCallsWithoutIndex(t *testing.T) {
	body := `data: {"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"id":"a1","type":"function","function":{"name":"search_documents","arguments":"{\"query\":\"a\"}"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"b2","type":"function","function":{"name":"fetch_url","arguments":"{\"url\":\"https://example.com\"}"}}]}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

`
	srv := httptest.NewServer(sse([]byte(body)))
	defer srv.Close()
	var deltas []llmstream.ToolCallDelta
	ctx := llmstream.WithToolCallDeltaFunc(context.Background(), func(_ context.Context, d llmstream.ToolCallDelta) error {
		deltas = append(deltas, d)
		return nil
	})
	resp, err := mustModel(t, srv.URL).GenerateContent(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tc := resp.Choices[0].ToolCalls
	if len(tc) != 2 || tc[0].FunctionCall.Arguments != `{"query":"a"}` || tc[1].ID != "b2" || tc[1].FunctionCall.Name != "fetch_url" {
		t.Errorf("tool calls %+v", tc)
	}
	if len(deltas) != 2 || deltas[0].Index == deltas[1].Index {
		t.Errorf("deltas %+v, want two indexes", deltas)
	}
}
