package openaiwire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent/llmstream"
	"github.com/toolmark/toolmark/simplifiedagent/modelerr"
)

// Reasoning on the chat-completions wire, by source:
//
//   - DeepSeek's thinking mode ("Thinking Mode", api-docs.deepseek.com):
//     reasoning_content deltas before the answer; in a tool-calling turn
//     the assistant message must carry its reasoning_content back.
//   - OpenRouter ("Reasoning Tokens", openrouter.ai/docs) and Ollama's /v1:
//     reasoning deltas.
//   - Mistral's Magistral ("Reasoning", docs.mistral.ai): content as an
//     array of parts, {"type":"thinking","thinking":[{"type":"text",…}]}
//     and {"type":"text","text":…}.
//   - Gemini's OpenAI compatibility ("Thought signatures",
//     ai.google.dev/gemini-api/docs/openai): a tool call's
//     extra_content.google.thought_signature, sent back on the call.

// thinking gathers a response's reasoning text, by the field it came in.
type thinking struct {
	fn    llmstream.ReasoningFunc
	kinds []string // in the order they first came
	text  map[string]*strings.Builder
}

func (t *thinking) add(ctx context.Context, kind, s string) error {
	if s == "" {
		return nil
	}
	if t.text == nil {
		t.text = map[string]*strings.Builder{}
	}
	b := t.text[kind]
	if b == nil {
		b = &strings.Builder{}
		t.text[kind] = b
		t.kinds = append(t.kinds, kind)
	}
	b.WriteString(s)
	if t.fn != nil {
		if err := t.fn(ctx, s); err != nil {
			return fmt.Errorf("openaiwire: reasoning func: %w", err)
		}
	}
	return nil
}

// parts returns the reasoning items gathered, one per field.
func (t *thinking) parts() []toolmark.ReasoningPart {
	var out []toolmark.ReasoningPart
	for _, k := range t.kinds {
		out = append(out, toolmark.ReasoningPart{Kind: k, Text: t.text[k].String()})
	}
	return out
}

// delta takes the text and the thinking of one delta (or whole message).
func (a *accumulator) delta(ctx context.Context, d wireDelta, opts *llms.CallOptions) error {
	if err := a.think.add(ctx, toolmark.ReasoningContent, d.ReasoningContent); err != nil {
		return err
	}
	if err := a.think.add(ctx, toolmark.ReasoningField, d.Reasoning); err != nil {
		return err
	}
	parts, err := contentParts(d.Content)
	if err != nil {
		return modelerr.New(toolmark.EBADRESPONSE, fmt.Errorf("openaiwire: content: %w", err))
	}
	for _, p := range parts {
		if p.thinking {
			if err := a.think.add(ctx, toolmark.ReasoningThinkingPart, p.text); err != nil {
				return err
			}
			continue
		}
		if p.text == "" {
			continue
		}
		a.text.WriteString(p.text)
		if opts.StreamingFunc != nil {
			if err := opts.StreamingFunc(ctx, []byte(p.text)); err != nil {
				return fmt.Errorf("openaiwire: streaming func: %w", err)
			}
		}
	}
	return nil
}

// contentPart is one piece of a message's content: answer text, or
// thinking.
type contentPart struct {
	text     string
	thinking bool
}

// contentParts reads a content field: a string, null, or an array of
// parts, each {"type":"text","text":…} or {"type":"thinking","thinking":…}
// where thinking is a string or an array of text parts. Parts of other
// types (images, references) are skipped.
func contentParts(raw json.RawMessage) ([]contentPart, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []contentPart{{text: s}}, nil
	}
	var arr []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Thinking json.RawMessage `json:"thinking"`
	}
	if err := json.Unmarshal(raw, &arr); err != nil {
		return nil, errors.New("content is neither a string nor an array of parts")
	}
	var out []contentPart
	for _, p := range arr {
		switch p.Type {
		case "text":
			out = append(out, contentPart{text: p.Text})
		case "thinking":
			inner, err := contentParts(p.Thinking)
			if err != nil {
				return nil, fmt.Errorf("thinking part: %w", err)
			}
			for _, q := range inner {
				out = append(out, contentPart{text: q.text, thinking: true})
			}
		}
	}
	return out, nil
}

// extraContent is a tool call's provider data: Gemini's thought
// signature.
type extraContent struct {
	Google *struct {
		ThoughtSignature string `json:"thought_signature,omitempty"`
	} `json:"google,omitempty"`
}

func (tc wireToolCall) thoughtSignature() string {
	if tc.ExtraContent == nil || tc.ExtraContent.Google == nil {
		return ""
	}
	return tc.ExtraContent.Google.ThoughtSignature
}

// withSignature returns the provider data that carries sig back.
func withSignature(sig string) *extraContent {
	e := &extraContent{Google: &struct {
		ThoughtSignature string `json:"thought_signature,omitempty"`
	}{ThoughtSignature: sig}}
	return e
}
