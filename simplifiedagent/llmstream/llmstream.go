// Package llmstream is the small contract through which a model reports
// streamed tool-call arguments separately from streamed text.
//
// langchaingo's llms.WithStreamingFunc carries bytes only, and its openai
// provider hands tool-call deltas to that same function as JSON, so a caller
// cannot tell an answer that starts with `[{"id":` from a tool call. Models in
// this module (openaiwire, demo) instead look for a ToolCallDeltaFunc in the
// context of GenerateContent and report each argument fragment there, while
// StreamingFunc receives answer text only. A model that knows nothing of this
// package still works: its tool calls are taken from the final response.
package llmstream

import "context"

// ToolCallDelta is one streamed fragment of a tool call.
//
// Index identifies the call within one model response (parallel calls have
// different indexes). ID and Name are set on the first fragment of a call
// (some providers repeat them); Arguments is the next piece of the call's
// JSON arguments, possibly empty.
type ToolCallDelta struct {
	Index     int
	ID        string
	Name      string
	Arguments string
}

// ToolCallDeltaFunc receives tool-call fragments in stream order. An error
// stops the generation, as an error from a StreamingFunc does.
type ToolCallDeltaFunc func(ctx context.Context, d ToolCallDelta) error

type ctxKey struct{}

// WithToolCallDeltaFunc returns a context that asks a model to report
// tool-call fragments to fn.
func WithToolCallDeltaFunc(ctx context.Context, fn ToolCallDeltaFunc) context.Context {
	return context.WithValue(ctx, ctxKey{}, fn)
}

// ToolCallDeltaFuncFromContext returns the function set by
// WithToolCallDeltaFunc, or nil.
func ToolCallDeltaFuncFromContext(ctx context.Context) ToolCallDeltaFunc {
	fn, _ := ctx.Value(ctxKey{}).(ToolCallDeltaFunc)
	return fn
}
