package openaiwire

import (
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// Wire types of a chat-completions request; wireToolCall and wireFunction
// come back in the answer too.
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
