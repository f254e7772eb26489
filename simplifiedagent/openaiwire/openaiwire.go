// Package openaiwire is an llms.Model for the OpenAI chat-completions API
// and the servers that speak it (OpenAI, Ollama, vLLM, llama.cpp).
//
// It streams, and reports answer text to llms.WithStreamingFunc and
// tool-call argument fragments to the llmstream.ToolCallDeltaFunc in the
// context, never one as the other: langchaingo's own openai provider hands
// both to the streaming function and merges parallel tool calls by position,
// which this package exists to avoid. Messages, options and the response use
// langchaingo's types.
//
// It makes one request per call: retries are the caller's (the agent loop
// retries every provider the same way). Its errors are *modelerr.Error,
// classified from the server's answer: the HTTP status, the error's type
// and code, Retry-After; a stream that ends before the model finished is
// ErrStreamCut inside one.
package openaiwire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent/llmstream"
	"github.com/toolmark/toolmark/simplifiedagent/modelerr"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// ErrStreamCut means the response stream ended before the model finished.
// A cut stream is a *modelerr.Error of code unavailable wrapping it.
var ErrStreamCut = errors.New("openaiwire: stream ended before the response was complete")

// cut returns the error of a stream that ended early, for why.
func cut(why error) error {
	if why == nil {
		return modelerr.New(toolmark.EUNAVAILABLE, ErrStreamCut)
	}
	return modelerr.New(toolmark.EUNAVAILABLE, fmt.Errorf("%w: %w", ErrStreamCut, why))
}

// Model is an llms.Model over an OpenAI-compatible chat-completions endpoint.
type Model struct {
	BaseURL string // e.g. https://api.openai.com/v1
	APIKey  string // sent as a bearer token when set
	Model   string
	Client  *http.Client
	// URL, when set, is the whole endpoint to post to instead of BaseURL +
	// "/chat/completions" (Azure OpenAI's deployments take an api-version
	// query parameter).
	URL string
	// Header holds extra request headers (Azure OpenAI's api-key).
	Header http.Header
	// IdleTimeout ends a response that sends nothing for this long, so a
	// stalled server cannot hold a turn forever. Default 2 minutes.
	IdleTimeout time.Duration
}

// errIdle is the cause of a request cancelled by IdleTimeout.
var errIdle = errors.New("idle")

var _ llms.Model = (*Model)(nil)

// New returns a Model for baseURL (with or without a trailing /v1 is the
// caller's choice: requests go to baseURL + "/chat/completions").
func New(baseURL, apiKey, model string) (*Model, error) {
	if baseURL == "" {
		baseURL = "https://api.openai.com/v1"
	}
	if model == "" {
		return nil, errors.New("openaiwire: no model name")
	}
	return &Model{BaseURL: strings.TrimRight(baseURL, "/"), APIKey: apiKey, Model: model, Client: http.DefaultClient}, nil
}

// Call implements llms.Model for a single prompt.
func (m *Model) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// GenerateContent implements llms.Model. It always streams.
func (m *Model) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	opts := llms.CallOptions{}
	for _, o := range options {
		o(&opts)
	}
	body, err := json.Marshal(m.request(messages, &opts))
	if err != nil {
		return nil, fmt.Errorf("openaiwire: encoding request: %w", err)
	}
	idle := m.IdleTimeout
	if idle <= 0 {
		idle = 2 * time.Minute
	}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchdog := time.AfterFunc(idle, func() { cancel(errIdle) })
	defer watchdog.Stop()
	resp, err := m.post(rctx, body)
	if err != nil {
		return nil, m.idleError(rctx, ctx, idle, err)
	}
	defer resp.Body.Close()
	var res *llms.ContentResponse
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") &&
		strings.Contains(resp.Header.Get("Content-Type"), "json") {
		res, err = m.readWhole(ctx, resp.Body, &opts)
	} else {
		res, err = m.readStream(ctx, &idleReader{r: resp.Body, t: watchdog, d: idle}, &opts)
	}
	if err != nil {
		return nil, m.idleError(rctx, ctx, idle, err)
	}
	return res, nil
}

// idleError explains an error caused by the idle watchdog: a timeout.
func (m *Model) idleError(rctx, ctx context.Context, idle time.Duration, err error) error {
	if ctx.Err() == nil && errors.Is(context.Cause(rctx), errIdle) {
		return modelerr.New(toolmark.ETIMEOUT, fmt.Errorf("%w: nothing received for %s", ErrStreamCut, idle))
	}
	return err
}

// idleReader restarts the idle watchdog whenever data arrives.
type idleReader struct {
	r io.Reader
	t *time.Timer
	d time.Duration
}

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.t.Reset(r.d)
	}
	return n, err
}

func (m *Model) post(ctx context.Context, body []byte) (*http.Response, error) {
	client := m.Client
	if client == nil {
		client = http.DefaultClient
	}
	u := m.URL
	if u == "" {
		u = m.BaseURL + "/chat/completions"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, modelerr.New(toolmark.EBADREQUEST, err)
	}
	for k, v := range m.Header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if m.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+m.APIKey)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, modelerr.Classify(err)
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	return nil, readAPIError(resp)
}

// errorBody is an error answer in any of the shapes servers use:
// {"error": {"message", "type", "code"}} (OpenAI, llama.cpp),
// {"error": "text"} (Ollama) or {"object": "error", "message", "type",
// "code"} (vLLM).
type errorBody struct {
	Error   json.RawMessage `json:"error"`
	Object  string          `json:"object"`
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    any             `json:"code"`
}

// apiError returns the error the body describes, or nil: status 0 for an
// error inside the stream.
func (b errorBody) apiError(status int, retryAfter time.Duration) *modelerr.Error {
	var typ, code, msg string
	var inner struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	}
	var text string
	switch {
	case len(b.Error) > 0 && json.Unmarshal(b.Error, &inner) == nil && inner.Message != "":
		msg, typ = inner.Message, inner.Type
		if inner.Code != nil {
			code = fmt.Sprint(inner.Code)
		}
	case len(b.Error) > 0 && json.Unmarshal(b.Error, &text) == nil && text != "":
		msg = text
	case b.Object == "error":
		msg, typ = b.Message, b.Type
		if b.Code != nil {
			code = fmt.Sprint(b.Code)
		}
	default:
		return nil
	}
	if status == 0 {
		return modelerr.FromType(typ, code, msg)
	}
	return modelerr.FromHTTP(status, typ, code, msg, retryAfter)
}

// readAPIError classifies an error answer of the server.
func readAPIError(resp *http.Response) *modelerr.Error {
	defer resp.Body.Close()
	wait := modelerr.RetryAfter(resp.Header, time.Now())
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var b errorBody
	if json.Unmarshal(raw, &b) == nil {
		if e := b.apiError(resp.StatusCode, wait); e != nil {
			return e
		}
	}
	return modelerr.FromHTTP(resp.StatusCode, "", "", truncate(strings.TrimSpace(string(raw)), 300), wait)
}

// Wire types of the chat-completions API.
type (
	wireRequest struct {
		Model         string         `json:"model"`
		Messages      []wireMessage  `json:"messages"`
		Stream        bool           `json:"stream"`
		StreamOptions *streamOptions `json:"stream_options,omitempty"`
		Tools         []wireTool     `json:"tools,omitempty"`
		Temperature   *float64       `json:"temperature,omitempty"`
		MaxTokens     int            `json:"max_tokens,omitempty"`
		Stop          []string       `json:"stop,omitempty"`
	}
	streamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	}
	wireMessage struct {
		Role       string         `json:"role"`
		Content    *string        `json:"content"`
		ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
		ToolCallID string         `json:"tool_call_id,omitempty"`
		Name       string         `json:"name,omitempty"`
	}
	wireTool struct {
		Type     string          `json:"type"`
		Function wireFunctionDef `json:"function"`
	}
	wireFunctionDef struct {
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
		Parameters  any    `json:"parameters,omitempty"`
	}
	wireToolCall struct {
		Index    *int         `json:"index,omitempty"`
		ID       string       `json:"id,omitempty"`
		Type     string       `json:"type,omitempty"`
		Function wireFunction `json:"function"`
	}
	wireFunction struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	}
	wireUsage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	}
	wireChunk struct {
		Choices []struct {
			Index int `json:"index"`
			Delta struct {
				Content   string         `json:"content"`
				ToolCalls []wireToolCall `json:"tool_calls"`
			} `json:"delta"`
			Message struct { // non-streaming answers
				Content   string         `json:"content"`
				ToolCalls []wireToolCall `json:"tool_calls"`
			} `json:"message"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		Usage *wireUsage `json:"usage"`
		errorBody
	}
)

func ptr[T any](v T) *T { return &v }

func (m *Model) request(messages []llms.MessageContent, opts *llms.CallOptions) wireRequest {
	r := wireRequest{Model: m.Model, Stream: true, StreamOptions: &streamOptions{IncludeUsage: true},
		MaxTokens: opts.MaxTokens, Stop: opts.StopWords}
	if opts.Model != "" {
		r.Model = opts.Model
	}
	if opts.Temperature != 0 {
		r.Temperature = ptr(opts.Temperature)
	}
	for _, t := range opts.Tools {
		if t.Function == nil {
			continue
		}
		r.Tools = append(r.Tools, wireTool{Type: "function", Function: wireFunctionDef{
			Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters}})
	}
	for _, mc := range messages {
		r.Messages = append(r.Messages, wireMessages(mc)...)
	}
	return r
}

// wireMessages converts one langchaingo message; tool responses become one
// message each.
func wireMessages(mc llms.MessageContent) []wireMessage {
	var text strings.Builder
	var calls []wireToolCall
	var out []wireMessage
	for _, p := range mc.Parts {
		switch p := p.(type) {
		case llms.TextContent:
			text.WriteString(p.Text)
		case llms.ToolCall:
			f := wireFunction{}
			if p.FunctionCall != nil {
				f = wireFunction{Name: p.FunctionCall.Name, Arguments: p.FunctionCall.Arguments}
			}
			calls = append(calls, wireToolCall{ID: p.ID, Type: "function", Function: f})
		case llms.ToolCallResponse:
			out = append(out, wireMessage{Role: "tool", ToolCallID: p.ToolCallID, Content: ptr(p.Content)})
		}
	}
	if len(out) > 0 {
		return out
	}
	role := "user"
	switch mc.Role {
	case llms.ChatMessageTypeSystem:
		role = "system"
	case llms.ChatMessageTypeAI:
		role = "assistant"
	case llms.ChatMessageTypeTool:
		role = "tool"
	}
	msg := wireMessage{Role: role, ToolCalls: calls}
	if text.Len() > 0 || len(calls) == 0 {
		msg.Content = ptr(text.String())
	}
	return []wireMessage{msg}
}

// accumulator builds the response from chunks and reports the deltas.
type accumulator struct {
	text   strings.Builder
	calls  []*llms.ToolCall
	byIdx  map[int]*llms.ToolCall
	finish string
	usage  *wireUsage
}

func (a *accumulator) toolDelta(ctx context.Context, fn llmstream.ToolCallDeltaFunc, tc wireToolCall, pos int) error {
	if a.byIdx == nil {
		a.byIdx = map[int]*llms.ToolCall{}
	}
	idx := pos
	switch {
	case tc.Index != nil:
		idx = *tc.Index
	case tc.ID != "":
		// No index (some servers send each call whole): a new id is a new
		// call.
		idx = len(a.calls)
		for i, c := range a.calls {
			if c.ID == tc.ID {
				idx = a.indexOf(i)
			}
		}
	case len(a.calls) > 0:
		idx = a.indexOf(len(a.calls) - 1) // more arguments for the last call
	}
	c := a.byIdx[idx]
	if c == nil {
		c = &llms.ToolCall{Type: "function", FunctionCall: &llms.FunctionCall{}}
		a.byIdx[idx] = c
		a.calls = append(a.calls, c)
	}
	if c.ID == "" && tc.ID != "" {
		c.ID = tc.ID
	}
	if c.FunctionCall.Name == "" && tc.Function.Name != "" {
		c.FunctionCall.Name = tc.Function.Name
	}
	c.FunctionCall.Arguments += tc.Function.Arguments
	if fn != nil {
		return fn(ctx, llmstream.ToolCallDelta{Index: idx, ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return nil
}

// indexOf returns the stream index of the i-th call.
func (a *accumulator) indexOf(i int) int {
	for idx, c := range a.byIdx {
		if c == a.calls[i] {
			return idx
		}
	}
	return i
}

func (a *accumulator) response() *llms.ContentResponse {
	ch := &llms.ContentChoice{Content: a.text.String(), StopReason: a.finish, GenerationInfo: map[string]any{}}
	for i, c := range a.calls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d", i)
		}
		ch.ToolCalls = append(ch.ToolCalls, *c)
	}
	if a.usage != nil {
		ch.GenerationInfo["PromptTokens"] = a.usage.PromptTokens
		ch.GenerationInfo["CompletionTokens"] = a.usage.CompletionTokens
		ch.GenerationInfo["TotalTokens"] = a.usage.TotalTokens
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{ch}}
}

func (m *Model) readStream(ctx context.Context, body io.Reader, opts *llms.CallOptions) (*llms.ContentResponse, error) {
	deltaFn := llmstream.ToolCallDeltaFuncFromContext(ctx)
	var a accumulator
	r := bufio.NewReaderSize(body, 64<<10)
	done := false
	for !done {
		line, err := r.ReadString('\n')
		if err != nil && (err != io.EOF || line == "") {
			if ctx.Err() != nil {
				return nil, modelerr.Classify(fmt.Errorf("openaiwire: reading stream: %w", ctx.Err()))
			}
			if err == io.EOF {
				if a.finish != "" {
					break // some servers omit [DONE]
				}
				return nil, cut(nil)
			}
			return nil, cut(err)
		}
		line = strings.TrimRight(line, "\r\n")
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue // blank lines, comments, event: and id: fields
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			done = true
			break
		}
		var ch wireChunk
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			return nil, modelerr.New(toolmark.EUNAVAILABLE, fmt.Errorf("openaiwire: bad chunk %q: %w", truncate(data, 200), err))
		}
		if e := ch.apiError(0, 0); e != nil {
			return nil, e
		}
		if ch.Usage != nil {
			a.usage = ch.Usage
		}
		for _, c := range ch.Choices {
			if c.Index != 0 {
				continue
			}
			if c.Delta.Content != "" {
				a.text.WriteString(c.Delta.Content)
				if opts.StreamingFunc != nil {
					if err := opts.StreamingFunc(ctx, []byte(c.Delta.Content)); err != nil {
						return nil, fmt.Errorf("openaiwire: streaming func: %w", err)
					}
				}
			}
			for i, tc := range c.Delta.ToolCalls {
				if err := a.toolDelta(ctx, deltaFn, tc, i); err != nil {
					return nil, fmt.Errorf("openaiwire: tool-call delta func: %w", err)
				}
			}
			if c.FinishReason != nil && *c.FinishReason != "" {
				a.finish = *c.FinishReason
			}
		}
	}
	if a.finish == "" {
		return nil, cut(errors.New("no finish_reason before [DONE]"))
	}
	return a.response(), nil
}

// readWhole reads a non-streaming answer from a server that ignored
// "stream": it reports the text and calls in one piece each.
func (m *Model) readWhole(ctx context.Context, body io.Reader, opts *llms.CallOptions) (*llms.ContentResponse, error) {
	var ch wireChunk
	if err := json.NewDecoder(io.LimitReader(body, 32<<20)).Decode(&ch); err != nil {
		return nil, modelerr.Classify(fmt.Errorf("openaiwire: decoding response: %w", err))
	}
	if e := ch.apiError(0, 0); e != nil {
		return nil, e
	}
	if len(ch.Choices) == 0 {
		return nil, modelerr.New(toolmark.EUNAVAILABLE, errors.New("openaiwire: response has no choices"))
	}
	var a accumulator
	c := ch.Choices[0]
	a.text.WriteString(c.Message.Content)
	if c.Message.Content != "" && opts.StreamingFunc != nil {
		if err := opts.StreamingFunc(ctx, []byte(c.Message.Content)); err != nil {
			return nil, fmt.Errorf("openaiwire: streaming func: %w", err)
		}
	}
	deltaFn := llmstream.ToolCallDeltaFuncFromContext(ctx)
	for i, tc := range c.Message.ToolCalls {
		tc.Index = ptr(i)
		if err := a.toolDelta(ctx, deltaFn, tc, i); err != nil {
			return nil, fmt.Errorf("openaiwire: tool-call delta func: %w", err)
		}
	}
	if c.FinishReason != nil {
		a.finish = *c.FinishReason
	}
	a.usage = ch.Usage
	return a.response(), nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return toolcallmarkup.Truncate(s, n) + "…"
}
