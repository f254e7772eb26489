package llmstream_test

import (
	"context"
	"testing"

	"github.com/toolmark/toolmark/simplifiedagent/llmstream"
)

func TestContext(t *testing.T) {
	if fn := llmstream.ToolCallDeltaFuncFromContext(context.Background()); fn != nil {
		t.Fatal("want nil without a function")
	}
	var got llmstream.ToolCallDelta
	ctx := llmstream.WithToolCallDeltaFunc(context.Background(), func(_ context.Context, d llmstream.ToolCallDelta) error {
		got = d
		return nil
	})
	fn := llmstream.ToolCallDeltaFuncFromContext(ctx)
	if fn == nil {
		t.Fatal("want the function back")
	}
	_ = fn(ctx, llmstream.ToolCallDelta{Index: 1, ID: "c", Name: "n", Arguments: "{"})
	if got.Index != 1 || got.ID != "c" || got.Arguments != "{" {
		t.Errorf("got %+v", got)
	}
}
