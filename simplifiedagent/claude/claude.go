// Package claude is an llms.Model for Anthropic's messages API over the
// official Go SDK (github.com/anthropics/anthropic-sdk-go), so that the agent
// loop and its callbacks stay langchaingo's while every part of a message
// reaches the API.
//
// langchaingo's own anthropic provider sends only the first part of an
// assistant message: a reply that holds text and then a tool_use block
// (Claude's usual "I'll search for that…" before a call), or several
// tool_use blocks, goes back without its calls, and the API refuses the
// tool results that answer them. Here an assistant message keeps its text
// and all its calls, in order, and the results of one round's calls go back
// together in the next user message, as the API requires.
//
// It streams: answer text goes to llms.WithStreamingFunc, each tool call's
// input to the llmstream.ToolCallDeltaFunc in the context as it arrives.
// Token usage is in the response's GenerationInfo (InputTokens,
// OutputTokens). It makes one request per call (the SDK's own retries are
// off: the agent loop retries every provider the same way), and its errors
// are *modelerr.Error.
package claude

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent/llmstream"
	"github.com/toolmark/toolmark/simplifiedagent/modelerr"
)

// DefaultMaxTokens bounds a reply when the call names no limit.
const DefaultMaxTokens = 8192

// Model is an llms.Model over Anthropic's messages API.
type Model struct {
	client anthropic.Client
	model  string
}

var _ llms.Model = (*Model)(nil)

// Config configures a Model.
type Config struct {
	APIKey string
	Model  string // e.g. claude-sonnet-4-5
	// BaseURL is the API's address, "" for Anthropic's; with or without a
	// trailing /v1.
	BaseURL string
	// HTTPClient makes the requests; nil for the SDK's default.
	HTTPClient *http.Client
	// Timeout bounds one request, stream included; 0 for 10 minutes.
	Timeout time.Duration
}

// New returns a Model. It reads no environment variable: the caller gives
// the key, the model and the address.
func New(cfg Config) (*Model, error) {
	if cfg.APIKey == "" {
		return nil, errors.New("claude: no API key")
	}
	if cfg.Model == "" {
		return nil, errors.New("claude: no model name")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Minute
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(0),
		option.WithRequestTimeout(cfg.Timeout),
	}
	if cfg.BaseURL != "" {
		base := strings.TrimSuffix(strings.TrimRight(cfg.BaseURL, "/"), "/v1")
		opts = append(opts, option.WithBaseURL(base+"/"))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &Model{client: anthropic.NewClient(opts...), model: cfg.Model}, nil
}

// ToolResultImages reports that the messages API takes images in tool
// results, so the agent sends a tool's images to the model (as
// llms.BinaryContent parts right after its llms.ToolCallResponse).
func (m *Model) ToolResultImages() bool { return true }

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
	params, err := m.params(messages, &opts)
	if err != nil {
		return nil, modelerr.New(toolmark.EBADREQUEST, err)
	}
	stream := m.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	r := reply{deltaFn: llmstream.ToolCallDeltaFuncFromContext(ctx), stream: opts.StreamingFunc,
		thinkFn: llmstream.ReasoningFuncFromContext(ctx)}
	for stream.Next() {
		if err := r.event(ctx, stream.Current()); err != nil {
			return nil, err
		}
	}
	if err := stream.Err(); err != nil {
		return nil, classify(err)
	}
	if !r.stopped && r.stop == "" {
		return nil, modelerr.New(toolmark.ESTREAMCUT, errors.New("claude: the stream ended before message_stop"))
	}
	return r.response(), nil
}

// params builds the request: the system messages joined into the system
// prompt, the others as alternating user and assistant messages.
func (m *Model) params(messages []llms.MessageContent, opts *llms.CallOptions) (anthropic.MessageNewParams, error) {
	p := anthropic.MessageNewParams{Model: anthropic.Model(m.model), MaxTokens: DefaultMaxTokens}
	if opts.Model != "" {
		p.Model = anthropic.Model(opts.Model)
	}
	if opts.MaxTokens > 0 {
		p.MaxTokens = int64(opts.MaxTokens)
	}
	if opts.Temperature != 0 {
		p.Temperature = anthropic.Float(opts.Temperature)
	}
	p.StopSequences = opts.StopWords
	for _, t := range opts.Tools {
		if t.Function == nil {
			continue
		}
		tool, err := toolParam(t.Function)
		if err != nil {
			return p, err
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: tool})
	}
	msgs, system, err := convert(messages)
	if err != nil {
		return p, err
	}
	p.Messages = msgs
	if system != "" {
		p.System = []anthropic.TextBlockParam{{Text: system}}
	}
	return p, nil
}

// toolParam converts a function definition: its JSON-schema parameters
// become the tool's input schema.
func toolParam(f *llms.FunctionDefinition) (*anthropic.ToolParam, error) {
	var schema struct {
		Properties any      `json:"properties"`
		Required   []string `json:"required"`
	}
	if f.Parameters != nil {
		b, err := json.Marshal(f.Parameters)
		if err != nil {
			return nil, fmt.Errorf("claude: parameters of %s: %w", f.Name, err)
		}
		if err := json.Unmarshal(b, &schema); err != nil {
			return nil, fmt.Errorf("claude: parameters of %s: %w", f.Name, err)
		}
	}
	t := &anthropic.ToolParam{Name: f.Name, InputSchema: anthropic.ToolInputSchemaParam{Properties: schema.Properties, Required: schema.Required}}
	if f.Description != "" {
		t.Description = anthropic.String(f.Description)
	}
	return t, nil
}

// convert turns langchaingo messages into the API's: every part of an
// assistant message in order (text and tool_use blocks), and tool
// responses as tool_result blocks of a user message. Consecutive messages
// of one role are merged into one, so the results of one round's calls
// answer them together in the message right after the calls.
func convert(messages []llms.MessageContent) ([]anthropic.MessageParam, string, error) {
	var system []string
	var out []anthropic.MessageParam
	add := func(role anthropic.MessageParamRole, blocks []anthropic.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, anthropic.MessageParam{Role: role, Content: blocks})
	}
	for _, mc := range messages {
		var blocks []anthropic.ContentBlockParamUnion
		for _, part := range mc.Parts {
			switch p := part.(type) {
			case llms.TextContent:
				if mc.Role == llms.ChatMessageTypeSystem {
					system = append(system, p.Text)
				} else if strings.TrimSpace(p.Text) != "" {
					// The API refuses empty and blank text blocks.
					blocks = append(blocks, anthropic.NewTextBlock(p.Text))
				}
			case llms.ToolCall:
				if p.FunctionCall == nil {
					return nil, "", fmt.Errorf("claude: tool call %q without a function", p.ID)
				}
				input := json.RawMessage(p.FunctionCall.Arguments)
				if !json.Valid(input) {
					input = json.RawMessage("{}")
				}
				blocks = append(blocks, anthropic.NewToolUseBlock(p.ID, input, p.FunctionCall.Name))
			case llms.ToolCallResponse:
				isErr := strings.HasPrefix(p.Content, "error: ")
				blocks = append(blocks, anthropic.NewToolResultBlock(p.ToolCallID, p.Content, isErr))
			case llmstream.ReasoningPart:
				// Thinking goes back unchanged, where the model wrote it
				// (before the text and the tool_use blocks); other
				// providers' reasoning does not.
				switch p.Kind {
				case toolmark.ReasoningThinking:
					blocks = append(blocks, anthropic.NewThinkingBlock(p.Signature, p.Text))
				case toolmark.ReasoningRedacted:
					blocks = append(blocks, anthropic.NewRedactedThinkingBlock(p.ReasoningPart.Data))
				}
			case llms.BinaryContent:
				var err error
				if blocks, err = binaryBlock(blocks, p); err != nil {
					return nil, "", err
				}
			default:
				return nil, "", fmt.Errorf("claude: unsupported message part %T", part)
			}
		}
		switch mc.Role {
		case llms.ChatMessageTypeSystem:
		case llms.ChatMessageTypeAI:
			add(anthropic.MessageParamRoleAssistant, blocks)
		default: // human, generic and tool messages all speak for the user
			add(anthropic.MessageParamRoleUser, blocks)
		}
	}
	return out, strings.Join(system, "\n\n"), nil
}

// classify turns an SDK error into a *modelerr.Error: an error answer by
// its status and type, an error event inside the stream by its type.
func classify(err error) error {
	var ae *anthropic.Error
	if !errors.As(err, &ae) {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return modelerr.New(toolmark.EBADRESPONSE, err)
		}
		return modelerr.Classify(err)
	}
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal([]byte(ae.RawJSON()), &body)
	typ := body.Error.Type
	if typ == "" {
		typ = string(ae.Type())
	}
	if ae.StatusCode == 0 || ae.StatusCode == http.StatusOK { // an error event in the stream
		return modelerr.FromType(typ, "", body.Error.Message)
	}
	var wait time.Duration
	if ae.Response != nil {
		wait = modelerr.RetryAfter(ae.Response.Header, time.Now())
	}
	return modelerr.FromHTTP(ae.StatusCode, typ, "", body.Error.Message, wait)
}

// binaryBlock adds a binary part to a message's blocks: an image a tool
// returned, right after its result (see ToolResultImages), goes into that
// tool_result; an image or a PDF attached to a question is an image or a
// document block (base64).
func binaryBlock(blocks []anthropic.ContentBlockParamUnion, p llms.BinaryContent) ([]anthropic.ContentBlockParamUnion, error) {
	data := base64.StdEncoding.EncodeToString(p.Data)
	n := len(blocks)
	switch {
	case p.MIMEType == "application/pdf":
		return append(blocks, anthropic.NewDocumentBlock(anthropic.Base64PDFSourceParam{Data: data})), nil
	case !strings.HasPrefix(p.MIMEType, "image/"):
		return nil, fmt.Errorf("claude: unsupported binary part %q", p.MIMEType)
	case n > 0 && blocks[n-1].OfToolResult != nil:
		img := anthropic.NewImageBlockBase64(p.MIMEType, data)
		tr := blocks[n-1].OfToolResult
		tr.Content = append(tr.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: img.OfImage})
		return blocks, nil
	}
	return append(blocks, anthropic.NewImageBlockBase64(p.MIMEType, data)), nil
}
