package simplifiedagent_test

import (
	"context"
	"fmt"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent"
	"github.com/toolmark/toolmark/simplifiedagent/demo"
	"github.com/toolmark/toolmark/simplifiedagent/tools"
)

// staticSearcher is a knowledge base with one document.
type staticSearcher struct{}

func (staticSearcher) SearchDocuments(context.Context, string, int) ([]toolmark.DocumentHit, error) {
	return []toolmark.DocumentHit{{Source: "resume.md", Title: "Resuming a stream",
		Snippet: "Clients resume with Last-Event-ID."}}, nil
}

// Run with the offline demo model: the events arrive in order, and the
// content carries the tag in its final state.
func ExampleRun() {
	req := simplifiedagent.Request{
		Model: &demo.Model{}, // Delay 0: no pacing
		Input: "How do clients resume a stream?",
		Tools: []simplifiedagent.Tool{tools.NewSearchDocuments(staticSearcher{})},
	}
	res, err := simplifiedagent.Run(context.Background(), req, func(_ context.Context, e toolmark.Draft) error {
		if d, ok := e.Data.(toolmark.ToolCallData); ok && e.Type != toolmark.EventToolCallDelta {
			fmt.Println(e.Type, d.Markup)
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Rounds, "rounds,", len(res.ToolCalls), "tool call")
	// Output:
	// tool_call_started <ToolCall type="search_documents" status="pending" toolCallId="call_demo_1_0">
	// tool_call_running <ToolCall type="search_documents" status="running" toolCallId="call_demo_1_0" query="clients resume stream">
	// tool_call_success <ToolCall type="search_documents" status="success" toolCallId="call_demo_1_0" query="clients resume stream" count="1">
	// 2 rounds, 1 tool call
}

// BuildHistory sends earlier turns back as tool calls and results, with the
// markup removed from the answer text.
func ExampleBuildHistory() {
	msgs := simplifiedagent.BuildHistory("", []toolmark.HistoryTurn{{
		UserText:         "How do clients resume?",
		AssistantContent: `<ToolCall type="search_documents" status="success" toolCallId="c1" query="resume"></ToolCall>` + "\n\nWith Last-Event-ID.",
		ToolCalls: []toolmark.ToolCallRecord{{ID: "c1", Name: "search_documents",
			Arguments: []byte(`{"query":"resume"}`), Status: "success", Result: "Found 1 document"}},
	}})
	for _, m := range msgs {
		for _, p := range m.Parts {
			switch p := p.(type) {
			case llms.TextContent:
				fmt.Printf("%s: %s\n", m.Role, p.Text)
			case llms.ToolCall:
				fmt.Printf("%s: call %s %s%s\n", m.Role, p.ID, p.FunctionCall.Name, p.FunctionCall.Arguments)
			case llms.ToolCallResponse:
				fmt.Printf("%s: result of %s: %s\n", m.Role, p.ToolCallID, p.Content)
			}
		}
	}
	// Output:
	// human: How do clients resume?
	// ai: call c1 search_documents{"query":"resume"}
	// tool: result of c1: Found 1 document
	// ai: With Last-Event-ID.
}
