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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent/modelerr"
)

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
	// NoStreamOptions leaves stream_options (the usage of a streamed
	// answer) out of requests, for services that refuse the field:
	// Mistral's API answers it with a 422. New sets it for a base URL on
	// mistral.ai; the usage is then not reported.
	NoStreamOptions bool
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
	m := &Model{BaseURL: strings.TrimRight(baseURL, "/"), APIKey: apiKey, Model: model, Client: http.DefaultClient}
	if u, err := url.Parse(m.BaseURL); err == nil {
		h := strings.ToLower(u.Hostname())
		m.NoStreamOptions = h == "mistral.ai" || strings.HasSuffix(h, ".mistral.ai")
	}
	return m, nil
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
