package demo

import (
	"context"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark/simplifiedagent/llmstream"
)

// How the demo streams: tool-call arguments in chunks of ChunkBytes and
// text three words at a time, each piece after a pause of Delay.

// pacer makes one stream's pauses of d with one timer, made on the first
// and reset for each of the others.
type pacer struct {
	d time.Duration
	t *time.Timer
}

func (p *pacer) pause(ctx context.Context) error {
	if p.d <= 0 {
		return ctx.Err()
	}
	if p.t == nil {
		p.t = time.NewTimer(p.d)
	} else {
		p.t.Reset(p.d)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-p.t.C:
		return nil
	}
}

func (p *pacer) stop() {
	if p.t != nil {
		p.t.Stop()
	}
}

// toolCalls streams calls' arguments and returns them.
func (m *Model) toolCalls(ctx context.Context, calls []llms.ToolCall) (*llms.ContentResponse, error) {
	fn := llmstream.ToolCallDeltaFuncFromContext(ctx)
	size := m.ChunkBytes
	if size <= 0 {
		size = 6
	}
	p := pacer{d: m.Delay}
	defer p.stop()
	for i, c := range calls {
		if fn == nil {
			break
		}
		if err := p.pause(ctx); err != nil {
			return nil, err
		}
		if err := fn(ctx, llmstream.ToolCallDelta{Index: i, ID: c.ID, Name: c.FunctionCall.Name}); err != nil {
			return nil, err
		}
		for _, chunk := range chunks(c.FunctionCall.Arguments, size) {
			if err := p.pause(ctx); err != nil {
				return nil, err
			}
			if err := fn(ctx, llmstream.ToolCallDelta{Index: i, Arguments: chunk}); err != nil {
				return nil, err
			}
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{StopReason: "tool_calls", ToolCalls: calls}}}, nil
}

// text streams s a few words at a time.
func (m *Model) text(ctx context.Context, opts *llms.CallOptions, s string) (*llms.ContentResponse, error) {
	if opts.StreamingFunc != nil {
		p := pacer{d: m.Delay}
		defer p.stop()
		// One copy of the answer, handed out in pieces each capped at its
		// end, so that a handler appending to one cannot reach the next.
		b, start := []byte(s), 0
		for _, end := range wordEnds(s) {
			if err := p.pause(ctx); err != nil {
				return nil, err
			}
			if err := opts.StreamingFunc(ctx, b[start:end:end]); err != nil {
				return nil, err
			}
			start = end
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: s, StopReason: "stop"}}}, nil
}

// textThenCalls streams s, then calls' arguments, as a model does that
// writes and then calls a tool in one reply.
func (m *Model) textThenCalls(ctx context.Context, opts *llms.CallOptions, s string, calls []llms.ToolCall) (*llms.ContentResponse, error) {
	if _, err := m.text(ctx, opts, s); err != nil {
		return nil, err
	}
	resp, err := m.toolCalls(ctx, calls)
	if err != nil {
		return nil, err
	}
	resp.Choices[0].Content = s
	return resp, nil
}

// chunks cuts s into pieces of about n bytes on rune boundaries.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		k := min(n, len(s))
		for k < len(s) && s[k]&0xC0 == 0x80 {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

// wordEnds cuts s into pieces of three words with their trailing space,
// and returns where each piece ends.
func wordEnds(s string) []int {
	var out []int
	count, start := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '\n' {
			count++
			if count == 3 {
				out = append(out, i+1)
				start, count = i+1, 0
			}
		}
	}
	if start < len(s) {
		out = append(out, len(s))
	}
	return out
}
