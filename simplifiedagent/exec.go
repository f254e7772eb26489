package simplifiedagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tmc/langchaingo/callbacks"

	"github.com/toolmark/toolmark/simplifiedagent/tools"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

type ctxKey int

const callKey ctxKey = 0

// callInfo is what the loop puts into a tool's context.
type callInfo struct {
	c *call
	s *session
	l *loop
}

func withCall(ctx context.Context, c *call, l *loop) context.Context {
	return context.WithValue(ctx, callKey, &callInfo{c: c, s: l.s, l: l})
}

func callFromContext(ctx context.Context) *callInfo {
	ci, _ := ctx.Value(callKey).(*callInfo)
	return ci
}

// ToolCallIDFromContext returns the toolCallId of the tool call whose
// context ctx is, or "" outside a tool call.
func ToolCallIDFromContext(ctx context.Context) string {
	if ci := callFromContext(ctx); ci != nil {
		return ci.c.id
	}
	return ""
}

// ParentToolCallIDFromContext returns the toolCallId of the sub-agent call
// that the current tool call belongs to, or "" at top level.
func ParentToolCallIDFromContext(ctx context.Context) string {
	if ci := callFromContext(ctx); ci != nil {
		return ci.c.parentID
	}
	return ""
}

// errCancelled is handed to HandleToolError for a call stopped by
// cancellation of the run.
var errCancelled = errors.New("cancelled")

// Handler is the langchaingo callbacks.Handler that turns the loop's
// callbacks into events: HandleStreamingFunc into text_delta,
// HandleToolStart into tool_call_running, HandleToolEnd into
// tool_call_success and HandleToolError into tool_call_error. langchaingo's
// callbacks carry no tool-call id, so it reads the call from the context
// (see ToolCallIDFromContext). The loop creates one per model round.
type Handler struct {
	callbacks.SimpleHandler
	s    *session
	l    *loop
	rs   *roundStream
	next callbacks.Handler // Request.Callbacks
}

var _ callbacks.Handler = (*Handler)(nil)

// HandleStreamingFunc appends a chunk of answer text.
func (h *Handler) HandleStreamingFunc(ctx context.Context, chunk []byte) {
	if h.rs != nil {
		h.rs.mu.Lock()
		h.rs.text.Write(chunk)
		h.rs.mu.Unlock()
	}
	if h.l.showText {
		h.s.text(string(chunk))
	}
	if h.next != nil {
		h.next.HandleStreamingFunc(ctx, chunk)
	}
}

// HandleToolStart marks the call in ctx as running.
func (h *Handler) HandleToolStart(ctx context.Context, input string) {
	if ci := callFromContext(ctx); ci != nil {
		h.s.running(ci.c)
	}
	if h.next != nil {
		h.next.HandleToolStart(ctx, input)
	}
}

// HandleToolEnd marks the call in ctx as succeeded with output.
func (h *Handler) HandleToolEnd(ctx context.Context, output string) {
	if ci := callFromContext(ctx); ci != nil {
		h.s.succeed(ci.c, output)
	}
	if h.next != nil {
		h.next.HandleToolEnd(ctx, output)
	}
}

// HandleToolError marks the call in ctx as failed, or as cancelled when the
// run was cancelled.
func (h *Handler) HandleToolError(ctx context.Context, err error) {
	if h.next != nil {
		h.next.HandleToolError(ctx, err)
	}
	ci := callFromContext(ctx)
	if ci == nil {
		return
	}
	if errors.Is(err, errCancelled) {
		h.s.fail(ci.c, toolcallmarkup.StatusCancelled, "cancelled")
		return
	}
	// The tag and the event show what users may see: a tool's own short
	// message, or the text without internal addresses (tools.UserMessage).
	h.s.fail(ci.c, toolcallmarkup.StatusError, tools.UserMessage(err))
}

type outcome struct {
	ctx context.Context
	c   *call
	out string
	err error
}

// execute runs the calls of one round concurrently and records their
// outcomes; it returns when every call is final or abandoned.
func (l *loop) execute(ctx context.Context, calls []*call) {
	h := &Handler{s: l.s, l: l, next: l.req.Callbacks}
	done := make(chan outcome, len(calls))
	n := 0
	for _, c := range calls {
		cctx := withCall(ctx, c, l)
		input, err := l.prepare(c)
		if err != nil {
			h.HandleToolError(cctx, err)
			continue
		}
		h.HandleToolStart(cctx, input)
		n++
		go l.runTool(ctx, cctx, c, input, done)
	}
	for range n {
		o := <-done
		if o.err != nil {
			h.HandleToolError(o.ctx, o.err)
		} else {
			h.HandleToolEnd(o.ctx, o.out)
		}
	}
}

// prepare checks a call and returns the tool's input.
func (l *loop) prepare(c *call) (string, error) {
	if c.tool == nil {
		return "", fmt.Errorf("unknown tool %q", c.name)
	}
	args := strings.TrimSpace(c.args.String())
	if args == "" {
		args = "{}"
	}
	if !json.Valid([]byte(args)) {
		return "", fmt.Errorf("invalid JSON arguments: %s", truncate(args, 200))
	}
	if _, ok := c.tool.(ParametersTool); ok {
		return args, nil
	}
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) == nil {
		if s, ok := m["input"].(string); ok {
			return s, nil
		}
	}
	return args, nil
}

// runTool calls the tool with its own timeout, turns a panic into an error
// and abandons a tool that ignores its context after the grace period.
func (l *loop) runTool(ctx, cctx context.Context, c *call, input string, done chan<- outcome) {
	timeout := l.req.ToolTimeout
	if t, ok := c.tool.(TimeoutTool); ok && t.Timeout() > 0 {
		timeout = t.Timeout()
	}
	tctx, cancel := context.WithTimeout(cctx, timeout)
	defer cancel()
	res := make(chan outcome, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				res <- outcome{err: fmt.Errorf("tool panicked: %v", r)}
			}
		}()
		out, err := c.tool.Call(tctx, input)
		res <- outcome{out: out, err: err}
	}()
	var o outcome
	select {
	case o = <-res:
	case <-tctx.Done():
		t := time.NewTimer(l.req.CancelGrace)
		select {
		case o = <-res:
		case <-t.C:
			o = outcome{err: tctx.Err()}
		}
		t.Stop()
	}
	o.ctx, o.c = cctx, c
	if o.err != nil {
		switch {
		case ctx.Err() != nil:
			o.err = errCancelled
		case errors.Is(tctx.Err(), context.DeadlineExceeded):
			o.err = fmt.Errorf("timed out after %s", timeout)
		}
	}
	done <- o
}
