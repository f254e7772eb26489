package claude

import (
	"context"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent/llmstream"
)

// reply builds a response from the events of one stream and reports its
// text and tool-call input as they arrive.
type reply struct {
	deltaFn llmstream.ToolCallDeltaFunc
	stream  func(ctx context.Context, chunk []byte) error
	thinkFn llmstream.ReasoningFunc

	// thinking and redacted_thinking blocks, in order, by block index
	think   []*toolmark.ReasoningPart
	byThink map[int64]*toolmark.ReasoningPart

	text    strings.Builder
	calls   []*llms.ToolCall
	args    llmstream.Args
	byBlock map[int64]*llms.ToolCall // tool_use blocks by content-block index
	stop    string
	in, out int64
	stopped bool // message_stop arrived
}

// event takes one stream event.
func (r *reply) event(ctx context.Context, ev anthropic.MessageStreamEventUnion) error {
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		r.in = u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
		r.out = u.OutputTokens
	case "content_block_start":
		b := ev.ContentBlock
		switch b.Type {
		case "text":
			return r.addText(ctx, b.Text)
		case "tool_use":
			return r.startCall(ctx, ev.Index, b.ID, b.Name)
		case "thinking":
			r.startThinking(ev.Index, toolmark.ReasoningPart{Kind: toolmark.ReasoningThinking, Signature: b.Signature})
			return r.addThinking(ctx, ev.Index, b.Thinking)
		case "redacted_thinking":
			r.startThinking(ev.Index, toolmark.ReasoningPart{Kind: toolmark.ReasoningRedacted, Data: b.Data})
		}
	case "content_block_delta":
		switch ev.Delta.Type {
		case "text_delta":
			return r.addText(ctx, ev.Delta.Text)
		case "input_json_delta":
			return r.addInput(ctx, ev.Index, ev.Delta.PartialJSON)
		case "thinking_delta":
			return r.addThinking(ctx, ev.Index, ev.Delta.Thinking)
		case "signature_delta":
			if p := r.byThink[ev.Index]; p != nil {
				p.Signature += ev.Delta.Signature
			}
		}
	case "message_delta":
		if ev.Delta.StopReason != "" {
			r.stop = string(ev.Delta.StopReason)
		}
		if ev.Usage.OutputTokens > 0 {
			r.out = ev.Usage.OutputTokens // cumulative
		}
		if n := ev.Usage.InputTokens + ev.Usage.CacheCreationInputTokens + ev.Usage.CacheReadInputTokens; n > 0 {
			r.in = n
		}
	case "message_stop":
		r.stopped = true
	}
	return nil
}

func (r *reply) addText(ctx context.Context, s string) error {
	if s == "" {
		return nil
	}
	r.text.WriteString(s)
	if r.stream != nil {
		if err := r.stream(ctx, []byte(s)); err != nil {
			return fmt.Errorf("claude: streaming func: %w", err)
		}
	}
	return nil
}

// startThinking begins a thinking or redacted_thinking block.
func (r *reply) startThinking(idx int64, p toolmark.ReasoningPart) {
	if r.byThink == nil {
		r.byThink = map[int64]*toolmark.ReasoningPart{}
	}
	r.byThink[idx] = &p
	r.think = append(r.think, &p)
}

// addThinking adds streamed thinking text to block idx.
func (r *reply) addThinking(ctx context.Context, idx int64, s string) error {
	p := r.byThink[idx]
	if p == nil || s == "" {
		return nil
	}
	p.Text += s
	if r.thinkFn != nil {
		if err := r.thinkFn(ctx, s); err != nil {
			return fmt.Errorf("claude: reasoning func: %w", err)
		}
	}
	return nil
}

func (r *reply) startCall(ctx context.Context, idx int64, id, name string) error {
	if r.byBlock == nil {
		r.byBlock = map[int64]*llms.ToolCall{}
	}
	c := &llms.ToolCall{ID: id, Type: "function", FunctionCall: &llms.FunctionCall{Name: name}}
	r.byBlock[idx] = c
	r.calls = append(r.calls, c)
	return r.report(ctx, idx, id, name, "")
}

func (r *reply) addInput(ctx context.Context, idx int64, s string) error {
	c := r.byBlock[idx]
	if c == nil || s == "" {
		return nil
	}
	r.args.Append(c, s)
	return r.report(ctx, idx, "", "", s)
}

func (r *reply) report(ctx context.Context, idx int64, id, name, args string) error {
	if r.deltaFn == nil {
		return nil
	}
	if err := r.deltaFn(ctx, llmstream.ToolCallDelta{Index: int(idx), ID: id, Name: name, Arguments: args}); err != nil {
		return fmt.Errorf("claude: tool-call delta func: %w", err)
	}
	return nil
}

// response is the whole reply: its text, its tool calls in the order the
// model wrote them (input "{}" for a call streamed without one), why it
// stopped and its tokens.
func (r *reply) response() *llms.ContentResponse {
	r.args.Set()
	ch := &llms.ContentChoice{Content: r.text.String(), StopReason: r.stop, GenerationInfo: map[string]any{
		"InputTokens": int(r.in), "OutputTokens": int(r.out),
	}}
	if len(r.think) > 0 {
		parts := make([]toolmark.ReasoningPart, len(r.think))
		for i, p := range r.think {
			parts[i] = *p
		}
		ch.GenerationInfo[llmstream.ReasoningKey] = parts
	}
	for _, c := range r.calls {
		if strings.TrimSpace(c.FunctionCall.Arguments) == "" {
			c.FunctionCall.Arguments = "{}"
		}
		ch.ToolCalls = append(ch.ToolCalls, *c)
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{ch}}
}
