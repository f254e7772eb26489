package openaiwire

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent/llmstream"
	"github.com/toolmark/toolmark/simplifiedagent/modelerr"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// Wire types of a chat-completions answer, streamed or whole.
type (
	wireUsage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	}
	wireChunk struct {
		Choices []struct {
			Index        int       `json:"index"`
			Delta        wireDelta `json:"delta"`
			Message      wireDelta `json:"message"` // non-streaming answers
			FinishReason *string   `json:"finish_reason"`
		} `json:"choices"`
		Usage *wireUsage `json:"usage"`
		errorBody
	}
)

// wireDelta is the delta of a streamed chunk or the message of a whole
// answer. Content is a string, null, or an array of parts (Mistral's
// text and thinking parts); reasoning_content (DeepSeek, vLLM) and
// reasoning (OpenRouter, Ollama) carry thinking text.
type wireDelta struct {
	Content          json.RawMessage `json:"content"`
	ReasoningContent string          `json:"reasoning_content"`
	Reasoning        string          `json:"reasoning"`
	ToolCalls        []wireToolCall  `json:"tool_calls"`
}

// accumulator builds the response from chunks and reports the deltas.
type accumulator struct {
	text   strings.Builder
	think  thinking
	sigs   map[*llms.ToolCall]string // Gemini's thought signatures
	calls  []*llms.ToolCall
	args   llmstream.Args
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
	if sig := tc.thoughtSignature(); sig != "" {
		if a.sigs == nil {
			a.sigs = map[*llms.ToolCall]string{}
		}
		a.sigs[c] = sig
	}
	a.args.Append(c, tc.Function.Arguments)
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
	a.args.Set()
	ch := &llms.ContentChoice{Content: a.text.String(), StopReason: a.finish, GenerationInfo: map[string]any{}}
	parts := a.think.parts()
	for i, c := range a.calls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d", i)
		}
		ch.ToolCalls = append(ch.ToolCalls, *c)
		if sig := a.sigs[c]; sig != "" {
			parts = append(parts, toolmark.ReasoningPart{Kind: toolmark.ReasoningCallSignature, CallID: c.ID, Signature: sig})
		}
	}
	if len(parts) > 0 {
		ch.GenerationInfo[llmstream.ReasoningKey] = parts
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
	a.think.fn = llmstream.ReasoningFuncFromContext(ctx)
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
		raw := line
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
			if !strings.HasSuffix(raw, "\n") { // the body ended inside the chunk
				return nil, cut(err)
			}
			return nil, modelerr.New(toolmark.EBADRESPONSE, fmt.Errorf("openaiwire: bad chunk %q: %w", toolcallmarkup.Shorten(data, 200), err))
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
			if err := a.delta(ctx, c.Delta, opts); err != nil {
				return nil, err
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
	a.think.fn = llmstream.ReasoningFuncFromContext(ctx)
	c := ch.Choices[0]
	if err := a.delta(ctx, c.Message, opts); err != nil {
		return nil, err
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
