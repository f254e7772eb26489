package openaiwire

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent/llmstream"
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
		Role    string  `json:"role"`
		Content *string `json:"content"`
		// ReasoningContent and Reasoning carry an assistant message's
		// thinking back in the field it came in (DeepSeek requires it on
		// a tool-calling turn).
		ReasoningContent *string        `json:"reasoning_content,omitempty"`
		Reasoning        *string        `json:"reasoning,omitempty"`
		ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
		ToolCallID       string         `json:"tool_call_id,omitempty"`
		Name             string         `json:"name,omitempty"`
		// Parts, when set, is the content of a user message with images:
		// sent as content's array of parts in place of Content.
		Parts []wirePart `json:"-"`
	}
	// wirePart is a part of a user message's content: text or an image
	// (a data URL).
	wirePart struct {
		Type     string        `json:"type"`
		Text     *string       `json:"text,omitempty"`
		ImageURL *wireImageURL `json:"image_url,omitempty"`
	}
	wireImageURL struct {
		URL string `json:"url"`
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
		// ExtraContent is Gemini's thought signature of the call.
		ExtraContent *extraContent `json:"extra_content,omitempty"`
	}
	wireFunction struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	}
)

func ptr[T any](v T) *T { return &v }

func (m *Model) request(messages []llms.MessageContent, opts *llms.CallOptions) wireRequest {
	r := wireRequest{Model: m.Model, Stream: true, MaxTokens: opts.MaxTokens, Stop: opts.StopWords}
	if !m.NoStreamOptions {
		r.StreamOptions = &streamOptions{IncludeUsage: true}
	}
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
	images := false
	think := map[string]*string{}
	sigs := map[string]string{}
	for _, r := range llmstream.PartsOf(mc) {
		switch r.Kind {
		case toolmark.ReasoningContent, toolmark.ReasoningField:
			if think[r.Kind] == nil {
				think[r.Kind] = ptr("")
			}
			*think[r.Kind] += r.Text
		case toolmark.ReasoningCallSignature:
			sigs[r.CallID] = r.Signature
		}
	}
	for _, p := range mc.Parts {
		switch p := p.(type) {
		case llms.TextContent:
			text.WriteString(p.Text)
		case llms.ToolCall:
			f := wireFunction{}
			if p.FunctionCall != nil {
				f = wireFunction{Name: p.FunctionCall.Name, Arguments: p.FunctionCall.Arguments}
			}
			tc := wireToolCall{ID: p.ID, Type: "function", Function: f}
			if sig := sigs[p.ID]; sig != "" {
				tc.ExtraContent = withSignature(sig)
			}
			calls = append(calls, tc)
		case llms.ToolCallResponse:
			out = append(out, wireMessage{Role: "tool", ToolCallID: p.ToolCallID, Content: ptr(p.Content)})
		case llms.BinaryContent:
			if strings.HasPrefix(p.MIMEType, "image/") {
				images = true
			}
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
	if role == "assistant" {
		msg.ReasoningContent, msg.Reasoning = think[toolmark.ReasoningContent], think[toolmark.ReasoningField]
	}
	switch {
	case images && role == "user":
		msg.Parts = userParts(mc.Parts)
	case text.Len() > 0 || len(calls) == 0:
		msg.Content = ptr(text.String())
	}
	return []wireMessage{msg}
}

// userParts is the content of a user message with images: its text parts
// and its images as data URLs (OpenAI's image_url parts), in order. The
// API takes no PDF: those are left out (a turn with one is refused first).
func userParts(parts []llms.ContentPart) []wirePart {
	var out []wirePart
	for _, p := range parts {
		switch p := p.(type) {
		case llms.TextContent:
			if n := len(out); n > 0 && out[n-1].Type == "text" {
				*out[n-1].Text += p.Text
				continue
			}
			out = append(out, wirePart{Type: "text", Text: ptr(p.Text)})
		case llms.BinaryContent:
			if strings.HasPrefix(p.MIMEType, "image/") {
				url := "data:" + p.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(p.Data)
				out = append(out, wirePart{Type: "image_url", ImageURL: &wireImageURL{URL: url}})
			}
		}
	}
	return out
}

// MarshalJSON sends Parts, when set, as the message's content.
func (m wireMessage) MarshalJSON() ([]byte, error) {
	type plain wireMessage
	if m.Parts == nil {
		return json.Marshal(plain(m))
	}
	return json.Marshal(struct {
		plain
		Content []wirePart `json:"content"`
	}{plain(m), m.Parts})
}
