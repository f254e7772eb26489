package llmstream

import (
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// Args gathers the streamed arguments of a response's tool calls, each in
// a builder: appending every fragment to the call's Arguments string
// copied all of it each time, so an argument of n bytes streamed in small
// fragments (a file's text, a few characters at a time) cost n² bytes.
// The zero value is ready to use.
type Args struct {
	b map[*llms.ToolCall]*strings.Builder
}

// Append adds a fragment of c's arguments.
func (a *Args) Append(c *llms.ToolCall, fragment string) {
	if fragment == "" {
		return
	}
	if a.b == nil {
		a.b = map[*llms.ToolCall]*strings.Builder{}
	}
	b := a.b[c]
	if b == nil {
		b = &strings.Builder{}
		a.b[c] = b
	}
	b.WriteString(fragment)
}

// Set writes into each call its arguments so far, after any it had.
func (a *Args) Set() {
	for c, b := range a.b {
		c.FunctionCall.Arguments += b.String()
		b.Reset()
	}
}
