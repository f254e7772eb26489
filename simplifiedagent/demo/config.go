package demo

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark/toolcallmarkup"
)

// Config holds the demo model's load knobs, with which a load test shapes
// its turns. The zero value keeps the demo's usual behaviour.
type Config struct {
	// Tools is the number of tool calls of the first round: 0 plans them
	// from the question as usual; n > 0 makes exactly n search_documents
	// calls, each for one keyword of the question (so none is retried);
	// n < 0 makes none, and the answer comes at once.
	Tools int
	// AnswerBytes, when > 0, pads the answer with filler sentences or cuts
	// it to this many bytes (fewer by up to three when the cut would split
	// a rune); the answer still starts with Banner.
	AnswerBytes int
	// AnswerShape is what the padding is made of: ShapeParagraph (the
	// default) one long paragraph, ShapeCode one fenced code block,
	// ShapeMixed headings, paragraphs, lists and code blocks in turn.
	AnswerShape string
}

// The shapes of the padding of an answer (Config.AnswerShape).
const (
	ShapeParagraph = "paragraph"
	ShapeCode      = "code"
	ShapeMixed     = "mixed"
)

// CheckShape reports whether s names a shape of padding ("" is the default).
func CheckShape(s string) error {
	switch s {
	case "", ShapeParagraph, ShapeCode, ShapeMixed:
		return nil
	}
	return fmt.Errorf("unknown answer shape %q: paragraph, code or mixed", s)
}

// planned is plan with the Tools knob applied.
func (m *Model) planned(question string, offered map[string]bool, salt int) []llms.ToolCall {
	if calls := explicitCalls(question, offered, salt); len(calls) > 0 {
		return calls
	}
	switch {
	case m.Tools == 0 || (m.Tools > 0 && !offered["search_documents"]):
		return plan(question, offered, salt)
	case m.Tools < 0:
		return nil
	}
	words := strings.Fields(Keywords(question))
	if len(words) == 0 {
		words = []string{"toolmark"}
	}
	calls := make([]llms.ToolCall, m.Tools)
	for i := range calls {
		args, _ := json.Marshal(map[string]any{"query": words[i%len(words)]})
		calls[i] = newCall(salt, i, "search_documents", string(args))
	}
	return calls
}

// filler pads an answer to the length AnswerBytes asks for.
const filler = "This sentence pads the demo answer to the length the load test asked for. "

// codeLine and mixedPart pad the code and mixed shapes.
const codeLine = "\tfmt.Println(\"this line pads the demo answer\", i) // to the length asked for\n"

var mixedPart = "## A section of the padding\n\n" + strings.Repeat(filler, 6) + "\n\n" +
	"- a **first** point of the padding, with `code`\n- a second point, with a [link](https://example.com)\n- a third point\n\n" +
	"```go\n" + strings.Repeat(codeLine, 4) + "```\n\n"

// sized applies the AnswerBytes knob to an answer.
func (m *Model) sized(answer string) string {
	n := max(m.AnswerBytes, len(Banner))
	if m.AnswerBytes <= 0 || len(answer) == n {
		return answer
	}
	if len(answer) < n {
		var b strings.Builder
		b.Grow(n + len(mixedPart))
		b.WriteString(answer)
		b.WriteString("\n\n")
		pad := filler
		switch m.AnswerShape {
		case ShapeCode:
			b.WriteString("```go\n")
			pad = codeLine
		case ShapeMixed:
			pad = mixedPart
		}
		for b.Len() < n {
			b.WriteString(pad)
		}
		answer = b.String()
	}
	return toolcallmarkup.Truncate(answer, n)
}
