// Package fakeprovider is a local model service for tests: it speaks the
// streaming wire format of a real provider (OpenAI, Azure OpenAI, Ollama,
// vLLM, llama.cpp, Anthropic), answers each request with the next reply of
// a script, and validates every request the way the real API does —
// tool results must answer the calls of the message before them, roles
// must alternate where the API says so — answering a request that breaks a
// rule with the API's own 400 text.
//
// The shapes of the chunks follow recorded streams of each service; each
// dialect's file names its sources, and testdata/providers holds one
// recorded-shape stream per provider.
package fakeprovider

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark/simplifiedagent"
)

// Dialect names a provider's wire format.
type Dialect string

// The dialects.
const (
	OpenAI       Dialect = "openai"        // api.openai.com chat completions
	Azure        Dialect = "azure"         // Azure OpenAI deployments
	Ollama       Dialect = "ollama"        // Ollama's /v1 (0.5 and later: streamed tool calls, whole)
	OllamaLegacy Dialect = "ollama-legacy" // Ollama's /v1 before it streamed with tools: one JSON answer
	VLLM         Dialect = "vllm"          // vLLM's OpenAI-compatible server
	LlamaCpp     Dialect = "llama.cpp"     // llama.cpp's llama-server
	Anthropic    Dialect = "anthropic"     // Anthropic's messages API
	// The reasoning models (see reasoning.go): every reply thinks first.
	DeepSeek          Dialect = "deepseek"           // DeepSeek in thinking mode: reasoning_content
	Gemini            Dialect = "gemini"             // Gemini 3's OpenAI compatibility: thought signatures on calls
	Mistral           Dialect = "mistral"            // Mistral's Magistral: content as thinking and text parts
	AnthropicThinking Dialect = "anthropic-thinking" // Anthropic with extended thinking: thinking blocks with signatures
)

// Dialects lists every dialect, in the order of the conformance table.
var Dialects = []Dialect{OpenAI, Azure, Ollama, OllamaLegacy, VLLM, LlamaCpp, Anthropic, DeepSeek, Gemini, Mistral, AnthropicThinking}

// Keys and names the fake services expect.
const (
	APIKey     = "sk-test-key"
	Deployment = "gpt-4o-mini-dep"
	APIVersion = "2024-10-21"
)

// Call is one tool call of a reply; Args are the chunks its arguments
// stream in.
type Call struct {
	ID, Name string
	Args     []string
}

// Reply is what the fake model answers to one request.
type Reply struct {
	// Status, when set, is an error answer before any byte of stream (429,
	// 529, 500, …); RetryAfter its Retry-After header.
	Status     int
	RetryAfter string
	// Text is the answer text, in the chunks it streams in; the calls
	// follow it.
	Text  []string
	Calls []Call
	// Interleave streams the calls' argument chunks in turn (parallel calls
	// as some servers send them); Whole sends each call in one chunk.
	Interleave, Whole bool
	// StreamErr is an error inside the stream, of the dialect's kind for
	// "overloaded", "server" or "rate_limit"; it comes after the text, or
	// before anything with ErrFirst.
	StreamErr string
	ErrFirst  bool
	// Cut ends the body in the middle of the last call's arguments; NoDone
	// ends it after the finish chunk without the end marker; Malformed sends
	// a chunk that is not JSON after the text.
	Cut, NoDone, Malformed bool
	// SplitRune writes the body in two pieces, flushed apart, split inside
	// a multi-byte character.
	SplitRune bool
	// Input and Output are the usage the reply reports.
	Input, Output int
	// Thinking is the reasoning the reply streams before its answer, in
	// its dialect's form (a reasoning dialect has a default one);
	// Redacted adds a redacted_thinking block after it (Anthropic).
	Thinking []string
	Redacted bool
	// Stop is the finish reason sent instead of the usual one: length,
	// content_filter (chat completions), max_tokens, refusal, pause_turn
	// (Anthropic).
	Stop string
	// Error, with Status, names the error answer: "quota" (OpenAI's
	// insufficient_quota, Anthropic's low credit balance).
	Error string
}

// Server is one fake model service.
type Server struct {
	Dialect Dialect
	srv     *httptest.Server

	mu       sync.Mutex
	script   []Reply
	next     int
	bodies   []map[string]any
	problems []string
	issued   map[string]issued // what the model must get back, by call id
}

// Start starts a fake service of dialect d answering with script, one
// reply per request (the last one repeats). It stops when tb ends.
func Start(tb testing.TB, d Dialect, script ...Reply) *Server {
	s := &Server{Dialect: d, script: script}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.srv.Close)
	return s
}

// BaseURL is the address a user would configure for the service:
// OPENAI_BASE_URL (with /v1), AZURE_OPENAI_ENDPOINT or ANTHROPIC_BASE_URL.
func (s *Server) BaseURL() string {
	switch s.Dialect {
	case Azure, Anthropic, AnthropicThinking:
		return s.srv.URL
	}
	return s.srv.URL + "/v1"
}

// Host is the service's host:port, which no user-visible text may name.
func (s *Server) Host() string { return strings.TrimPrefix(s.srv.URL, "http://") }

// Requests returns the bodies of the requests received, decoded.
func (s *Server) Requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.bodies...)
}

// Problems returns the requests the service refused as the real API would,
// each with its 400 text.
func (s *Server) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.problems...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		s.refuse(w, http.StatusBadRequest, "invalid_request_error", "the body is not JSON: "+err.Error())
		return
	}
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	s.mu.Unlock()
	status, typ, msg := s.validate(r, body)
	if status == 0 {
		status, typ, msg = s.validateReasoning(body)
	}
	if status != 0 {
		s.refuse(w, status, typ, msg)
		return
	}
	s.mu.Lock()
	rep := s.script[min(s.next, len(s.script)-1)]
	s.next++
	s.mu.Unlock()
	if rep.Status != 0 {
		if rep.RetryAfter != "" {
			w.Header().Set("Retry-After", rep.RetryAfter)
		}
		s.errorAnswer(w, rep.Status, rep.Error)
		return
	}
	s.issue(rep)
	var frames []string
	switch s.Dialect {
	case Anthropic, AnthropicThinking:
		frames = anthropicStream(s.Dialect, rep)
	case OllamaLegacy:
		if _, tools := body["tools"]; tools {
			if rep.StreamErr != "" { // an error, before anything: the answer is one piece
				s.errorAnswer(w, http.StatusServiceUnavailable, "")
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, ollamaLegacyWhole(rep))
			return
		}
		frames = openAIStream(Ollama, rep, includeUsage(body))
	default:
		frames = openAIStream(s.Dialect, rep, includeUsage(body))
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	write(w, strings.Join(frames, ""), rep.SplitRune)
}

// write sends body, in two flushed pieces split inside a multi-byte
// character when split is set.
func write(w http.ResponseWriter, body string, split bool) {
	f, _ := w.(http.Flusher)
	if split {
		for i := 0; i < len(body); i++ {
			if body[i] >= 0xC0 { // the first byte of a multi-byte character
				io.WriteString(w, body[:i+1])
				if f != nil {
					f.Flush()
				}
				time.Sleep(5 * time.Millisecond)
				body = body[i+1:]
				break
			}
		}
	}
	io.WriteString(w, body)
	if f != nil {
		f.Flush()
	}
}

// refuse answers a request the real API would refuse, and records it.
func (s *Server) refuse(w http.ResponseWriter, status int, typ, msg string) {
	s.mu.Lock()
	s.problems = append(s.problems, fmt.Sprintf("HTTP %d %s", status, msg))
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, errorBody(s.Dialect, typ, msg, status))
}

// validate checks a request as the real API would: 0 when it is accepted.
func (s *Server) validate(r *http.Request, body map[string]any) (int, string, string) {
	if s.Dialect == Anthropic || s.Dialect == AnthropicThinking {
		return validateAnthropic(r, body)
	}
	return validateOpenAI(s.Dialect, r, body)
}

// errorAnswer sends the dialect's error answer for status, of kind (see
// Reply.Error).
func (s *Server) errorAnswer(w http.ResponseWriter, status int, kind string) {
	typ, msg := errorKind(s.Dialect, status)
	if kind == "quota" {
		typ, msg = quotaError(s.Dialect)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, errorBody(s.Dialect, typ, msg, status))
}

// errorKind is the error type and message a service sends with status.
func errorKind(d Dialect, status int) (string, string) {
	if d == AnthropicThinking {
		d = Anthropic
	}
	switch {
	case d == Anthropic && status == 529:
		return "overloaded_error", "Overloaded"
	case d == Anthropic && status == 429:
		return "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit (https://docs.anthropic.com/en/api/rate-limits)"
	case d == Anthropic && status == 401:
		return "authentication_error", "invalid x-api-key"
	case d == Anthropic:
		return "api_error", "Internal server error"
	case status == 429:
		return "requests", "Rate limit reached for gpt-4o-mini in organization org-abc on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s. Visit https://platform.openai.com/account/rate-limits to learn more."
	case status == 503, status == 529:
		return "server_error", "The engine is currently overloaded, please try again later"
	case status == 401:
		return "invalid_request_error", "Incorrect API key provided: sk-test-***. You can find your API key at https://platform.openai.com/account/api-keys."
	}
	return "server_error", "The server had an error while processing your request. Sorry about that!"
}

// errorBody is the JSON of an error answer in the dialect's shape.
func errorBody(d Dialect, typ, msg string, status int) string {
	var v any
	switch d {
	case Anthropic, AnthropicThinking:
		v = map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}, "request_id": "req_011CTest"}
	case Gemini:
		v = []any{map[string]any{"error": map[string]any{"code": status, "message": msg, "status": typ}}}
	case Mistral:
		v = map[string]any{"object": "error", "message": map[string]any{"detail": []any{map[string]any{
			"type": "extra_forbidden", "loc": []any{"body"}, "msg": msg}}}, "type": typ, "param": nil, "code": nil}
	case VLLM:
		v = map[string]any{"object": "error", "message": msg, "type": typ, "param": nil, "code": status}
	case Ollama, OllamaLegacy:
		v = map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}}
	case LlamaCpp:
		v = map[string]any{"error": map[string]any{"code": status, "message": msg, "type": typ}}
	default:
		v = map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func includeUsage(body map[string]any) bool {
	o, _ := body["stream_options"].(map[string]any)
	v, _ := o["include_usage"].(bool)
	return v
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Model returns the toolmark model a user would configure for the
// service: its address, key and model name as the environment gives them.
func (s *Server) Model(tb testing.TB) llms.Model {
	tb.Helper()
	var m llms.Model
	var err error
	switch s.Dialect {
	case OpenAI:
		m, err = simplifiedagent.NewOpenAI(s.BaseURL(), APIKey, "gpt-4o-mini")
	case Azure:
		m, err = simplifiedagent.NewAzureOpenAI(s.BaseURL(), APIKey, Deployment, APIVersion)
	case Anthropic, AnthropicThinking:
		m, err = simplifiedagent.NewAnthropic(s.BaseURL(), APIKey, "claude-sonnet-4-5")
	case DeepSeek:
		m, err = simplifiedagent.NewOpenAI(s.BaseURL(), APIKey, "deepseek-reasoner")
	case Gemini:
		m, err = simplifiedagent.NewOpenAI(s.BaseURL(), APIKey, "gemini-3-pro-preview")
	case Mistral:
		m, err = simplifiedagent.NewMistral(s.BaseURL(), APIKey, "magistral-medium-latest")
	default:
		m, err = simplifiedagent.NewOpenAI(s.BaseURL(), "", "llama3.2")
	}
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// quotaError is the error of an account without quota or credit: OpenAI's
// insufficient_quota (a 429, "Error codes", platform.openai.com), or
// Anthropic's low credit balance (a 400, as the API answers it).
func quotaError(d Dialect) (string, string) {
	if d == Anthropic || d == AnthropicThinking {
		return "invalid_request_error", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."
	}
	return "insufficient_quota", "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors."
}
