package llmstream_test

import (
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark/simplifiedagent/llmstream"
)

// TestArgs: fragments reach their own call in order, after what the call
// held; a call without fragments keeps its arguments; Set twice adds
// nothing.
func TestArgs(t *testing.T) {
	a := &llms.ToolCall{FunctionCall: &llms.FunctionCall{}}
	b := &llms.ToolCall{FunctionCall: &llms.FunctionCall{Arguments: `{"whole":`}}
	c := &llms.ToolCall{FunctionCall: &llms.FunctionCall{Arguments: `{}`}}
	var args llmstream.Args
	for _, f := range []struct {
		call *llms.ToolCall
		s    string
	}{{a, `{"q":`}, {b, `1}`}, {a, ``}, {a, `"x"}`}} {
		args.Append(f.call, f.s)
	}
	args.Set()
	args.Set()
	if a.FunctionCall.Arguments != `{"q":"x"}` || b.FunctionCall.Arguments != `{"whole":1}` || c.FunctionCall.Arguments != `{}` {
		t.Errorf("arguments %q, %q, %q; want %q, %q, %q", a.FunctionCall.Arguments, b.FunctionCall.Arguments, c.FunctionCall.Arguments,
			`{"q":"x"}`, `{"whole":1}`, `{}`)
	}
}
