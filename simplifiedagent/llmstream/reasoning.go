package llmstream

import (
	"context"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
)

// ReasoningFunc receives a reasoning model's displayable thinking as it
// streams, apart from the answer text. An error stops the generation.
type ReasoningFunc func(ctx context.Context, text string) error

type reasoningKey struct{}

// WithReasoningFunc returns a context that asks a model to report its
// streamed thinking to fn.
func WithReasoningFunc(ctx context.Context, fn ReasoningFunc) context.Context {
	return context.WithValue(ctx, reasoningKey{}, fn)
}

// ReasoningFuncFromContext returns the function set by WithReasoningFunc,
// or nil.
func ReasoningFuncFromContext(ctx context.Context) ReasoningFunc {
	fn, _ := ctx.Value(reasoningKey{}).(ReasoningFunc)
	return fn
}

// ReasoningKey is the key of a response choice's GenerationInfo under
// which a model puts its reasoning items, a []toolmark.ReasoningPart in
// the order the model wrote them.
const ReasoningKey = "Reasoning"

// ReasoningOf returns the reasoning items of a response's choices.
func ReasoningOf(resp *llms.ContentResponse) []toolmark.ReasoningPart {
	var out []toolmark.ReasoningPart
	if resp == nil {
		return nil
	}
	for _, ch := range resp.Choices {
		if ch == nil {
			continue
		}
		if p, ok := ch.GenerationInfo[ReasoningKey].([]toolmark.ReasoningPart); ok {
			out = append(out, p...)
		}
	}
	return out
}

// ReasoningPart is a part of an assistant message that carries one
// reasoning item back to the model that wrote it (see toolmark.ReasoningPart
// for the kinds). A model that knows nothing of it skips it.
type ReasoningPart struct {
	toolmark.ReasoningPart
	// BinaryContent is empty: its method makes ReasoningPart an
	// llms.ContentPart (langchaingo's interface has an unexported method).
	llms.BinaryContent
}

// Part returns r as a message part.
func Part(r toolmark.ReasoningPart) ReasoningPart { return ReasoningPart{ReasoningPart: r} }

// PartsOf returns the reasoning items of a message's parts, in order.
func PartsOf(mc llms.MessageContent) []toolmark.ReasoningPart {
	var out []toolmark.ReasoningPart
	for _, p := range mc.Parts {
		if r, ok := p.(ReasoningPart); ok {
			out = append(out, r.ReasoningPart)
		}
	}
	return out
}
