package simplifiedagent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent/llmstream"
	"github.com/toolmark/toolmark/simplifiedagent/modelerr"
)

// roundStream collects what the model streamed in one round.
type roundStream struct {
	mu      sync.Mutex
	text    strings.Builder
	byIndex map[int]*call
	order   []*call
	round   int
	// think is the streamed thinking; it began at thinkStart and ended at
	// thinkEnd, when the answer's text or a tool call began.
	think                strings.Builder
	thinkStart, thinkEnd time.Time
}

// reply is what one model call answered.
type reply struct {
	text      string
	calls     []*call
	usage     toolmark.Usage
	stop      string                   // the provider's stop reason
	reasoning []toolmark.ReasoningPart // the provider's reasoning items, in order
}

// attempt makes one model call, streaming its text, its thinking and its
// tool-call arguments, and returns the reply. streamed tells whether
// anything of the reply reached the session (then the call is not made
// again).
func (l *loop) attempt(ctx context.Context, msgs []llms.MessageContent, offerTools bool, round int) (_ reply, streamed bool, _ error) {
	rs := &roundStream{byIndex: map[int]*call{}, round: round}
	h := &Handler{s: l.s, l: l, rs: rs, next: l.req.Callbacks}
	opts := []llms.CallOption{llms.WithStreamingFunc(func(ctx context.Context, chunk []byte) error {
		rs.answerBegan()
		h.HandleStreamingFunc(ctx, chunk)
		return l.s.emitError()
	})}
	if offerTools {
		opts = append(opts, llms.WithTools(l.defs))
	}
	gctx := llmstream.WithToolCallDeltaFunc(ctx, func(ctx context.Context, d llmstream.ToolCallDelta) error {
		rs.answerBegan()
		l.toolDelta(rs, d)
		return l.s.emitError()
	})
	gctx = llmstream.WithReasoningFunc(gctx, func(ctx context.Context, text string) error {
		l.thinking(rs, text)
		return l.s.emitError()
	})
	if h.next != nil {
		h.next.HandleLLMGenerateContentStart(ctx, msgs)
	}
	resp, err := l.callModel(ctx, gctx, msgs, opts)
	if h.next != nil {
		if err != nil {
			h.next.HandleLLMError(ctx, err)
		} else {
			h.next.HandleLLMGenerateContentEnd(ctx, resp)
		}
	}
	rs.mu.Lock()
	streamed = rs.text.Len() > 0 || len(rs.order) > 0 || rs.think.Len() > 0
	rs.mu.Unlock()
	if err != nil {
		l.thought(rs, nil, nil) // what it streamed of its thinking ends here
		return reply{calls: rs.order}, streamed, err
	}
	if resp == nil || len(resp.Choices) == 0 {
		return reply{calls: rs.order}, streamed, modelerr.New(toolmark.EBADRESPONSE, errors.New("the model returned no choices"))
	}
	usage, _ := usageOf(resp)
	// Some providers (anthropic) return one choice per content block: take
	// the text and the tool calls of all of them.
	var text strings.Builder
	var final []llms.ToolCall
	var stop string
	for _, ch := range resp.Choices {
		text.WriteString(ch.Content)
		final = append(final, ch.ToolCalls...)
		if ch.StopReason != "" {
			stop = ch.StopReason
		}
	}
	reasoning := llmstream.ReasoningOf(resp)
	l.thoughtWhole(rs, reasoning)
	full := text.String()
	rs.mu.Lock()
	sofar := rs.text.String()
	rs.mu.Unlock()
	switch {
	case sofar == "":
		l.showTextChunk(full)
	case strings.HasPrefix(full, sofar):
		l.showTextChunk(full[len(sofar):])
	}
	if full == "" {
		full = sofar
	}
	calls := l.matchCalls(rs, final)
	l.thought(rs, reasoning, calls)
	return reply{text: full, calls: calls, usage: usage, stop: stop, reasoning: reasoning}, true, nil
}

// callModel calls the model and returns its answer, or ctx's error once
// ctx is done and the model has had CancelGrace to return.
func (l *loop) callModel(ctx, gctx context.Context, msgs []llms.MessageContent, opts []llms.CallOption) (*llms.ContentResponse, error) {
	type answer struct {
		resp *llms.ContentResponse
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- answer{err: fmt.Errorf("the model panicked: %v", r)}
			}
		}()
		resp, err := l.req.Model.GenerateContent(gctx, msgs, opts...)
		done <- answer{resp, err}
	}()
	select {
	case a := <-done:
		return a.resp, a.err
	case <-ctx.Done():
	}
	t := time.NewTimer(l.req.CancelGrace)
	defer t.Stop()
	select {
	case a := <-done:
		return a.resp, a.err
	case <-t.C:
		return nil, fmt.Errorf("the model ignored cancellation: %w", context.Cause(ctx))
	}
}

func (l *loop) showTextChunk(s string) {
	if l.showText && s != "" {
		l.s.text(s)
	}
}

// toolDelta applies one streamed fragment of a tool call.
func (l *loop) toolDelta(rs *roundStream, d llmstream.ToolCallDelta) {
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	rs.mu.Lock()
	c := rs.byIndex[d.Index]
	if c == nil {
		c = s.newCallLocked(l, d.ID, d.Name)
		rs.byIndex[d.Index] = c
		rs.order = append(rs.order, c)
	}
	rs.mu.Unlock()
	if c.modelID == "" && d.ID != "" && !c.started {
		c.modelID = d.ID
	}
	if !c.started && d.Name != "" {
		s.startLocked(c, d.Name)
		// Arguments that arrived before the name are reported now.
		if pending := c.args.String(); pending != "" {
			c.args.Reset()
			s.argsDeltaLocked(c, pending)
		}
	}
	if !c.started {
		c.args.WriteString(d.Arguments)
		return
	}
	s.argsDeltaLocked(c, d.Arguments)
}

// matchCalls pairs the final tool calls of a response with the streamed
// ones (by id, then in order) and starts those that were not streamed.
func (l *loop) matchCalls(rs *roundStream, final []llms.ToolCall) []*call {
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	used := map[*call]bool{}
	ids := map[string]bool{} // ids of the final calls
	for _, tc := range final {
		ids[tc.ID] = true
	}
	var out []*call
	for _, tc := range final {
		name, args := "", ""
		if tc.FunctionCall != nil {
			name, args = tc.FunctionCall.Name, tc.FunctionCall.Arguments
		}
		var c *call
		for _, sc := range rs.order {
			if !used[sc] && tc.ID != "" && sc.modelID == tc.ID {
				c = sc
				break
			}
		}
		if c == nil {
			// Otherwise the first streamed call not yet matched: the ids of
			// calls streamed without one were made up on either side.
			for _, sc := range rs.order {
				if !used[sc] && !(tc.ID != "" && ids[sc.modelID]) {
					c = sc
					break
				}
			}
		}
		if c == nil {
			c = s.newCallLocked(l, tc.ID, name)
			s.argsDeltaLocked(c, args)
		} else {
			if !c.started {
				pending := c.args.String()
				c.args.Reset()
				s.startLocked(c, name)
				s.argsDeltaLocked(c, pending)
			}
			if args != "" && args != c.args.String() {
				c.args.Reset()
				c.args.WriteString(args)
			}
		}
		used[c] = true
		out = append(out, c)
	}
	// Streamed calls missing from the final response still run, so that
	// every started tag reaches a final status through the usual path.
	for _, sc := range rs.order {
		if !used[sc] {
			if !sc.started {
				s.startLocked(sc, "unknown")
			}
			out = append(out, sc)
		}
	}
	return out
}
