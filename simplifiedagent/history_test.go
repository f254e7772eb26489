package simplifiedagent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent"
)

func TestBuildHistory(t *testing.T) {
	turns := []toolmark.HistoryTurn{{
		UserText: "How do I resume?",
		AssistantContent: "Let me look.\n\n" +
			`<ToolCall type="subagent" status="success" toolCallId="s1"><ToolCall type="search_documents" status="success" toolCallId="n1" parentToolCallId="s1" query="x"></ToolCall></ToolCall>` +
			"\n\n" + `<ToolCall type="search_documents" status="error" toolCallId="c2" query="y" error="db down"></ToolCall>` +
			"\n\nUse Last-Event-ID. Text &lt;ToolCall stays text.",
		ToolCalls: []toolmark.ToolCallRecord{
			{ID: "s1", Name: "subagent", Arguments: json.RawMessage(`{"task":"t"}`), Status: "success", Result: "found it"},
			{ID: "n1", ParentID: "s1", Name: "search_documents", Arguments: json.RawMessage(`{"query":"x"}`), Status: "success", Result: "nested"},
			{ID: "c2", Name: "search_documents", Arguments: json.RawMessage(`{"query":"y"}`), Status: "error", Error: "db down"},
			{ID: "c3", Name: "fetch_url", Status: "running"},
		},
	}, {UserText: "Thanks", AssistantContent: "You're welcome."}}
	msgs := simplifiedagent.BuildHistory("They talked about tags.", turns)
	var got []string
	for _, m := range msgs {
		var parts []string
		for _, p := range m.Parts {
			switch p := p.(type) {
			case llms.TextContent:
				parts = append(parts, p.Text)
			case llms.ToolCall:
				parts = append(parts, "call "+p.ID+" "+p.FunctionCall.Name+p.FunctionCall.Arguments)
			case llms.ToolCallResponse:
				parts = append(parts, "result "+p.ToolCallID+" "+p.Content)
			}
		}
		got = append(got, string(m.Role)+": "+strings.Join(parts, " | "))
	}
	want := []string{
		"system: \n\n" + simplifiedagent.SummaryPrefix + "They talked about tags.",
		"human: How do I resume?",
		`ai: call s1 subagent{"task":"t"} | call c2 search_documents{"query":"y"} | call c3 fetch_url{}`,
		"tool: result s1 found it",
		"tool: result c2 error: db down",
		"tool: result c3 error: interrupted",
		"ai: Let me look.\n\nUse Last-Event-ID. Text <ToolCall stays text.",
		"human: Thanks",
		"ai: You're welcome.",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\n\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestCompact(t *testing.T) {
	var turns []toolmark.HistoryTurn
	for i := range 6 {
		turns = append(turns, toolmark.HistoryTurn{
			UserText:         "question " + string(rune('A'+i)) + " " + strings.Repeat("x", 100),
			AssistantContent: "answer " + strings.Repeat("y", 100),
		})
	}
	ctx := context.Background()
	// Within budget: nothing changes.
	s, keep, err := simplifiedagent.Compact(ctx, nil, "", turns, 10000)
	if err != nil || s != "" || len(keep) != 6 {
		t.Fatalf("within budget: %q, %d turns, %v", s, len(keep), err)
	}
	// Over budget: the oldest turns are folded into the summary.
	m := &scripted{replies: []*llms.ContentChoice{{Content: "The user asked A to D."}}}
	s, keep, err = simplifiedagent.Compact(ctx, m, "older", turns, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if s != "The user asked A to D." || len(keep) == 0 || len(keep) >= 6 || keep[len(keep)-1].UserText != turns[5].UserText {
		t.Errorf("summary %q, kept %d turns", s, len(keep))
	}
	if got := simplifiedagent.HistoryChars("", keep); got > 500 {
		t.Errorf("kept %d chars, want at most half the budget", got)
	}
	prompt := m.seen[0][0].Parts[0].(llms.TextContent).Text
	if !strings.HasPrefix(prompt, simplifiedagent.SummaryInstruction) || !strings.Contains(prompt, "older") ||
		!strings.Contains(prompt, "question A") || strings.Contains(prompt, "question F") {
		t.Errorf("prompt:\n%s", prompt)
	}
	// Without a model: a plain extract.
	s, _, err = simplifiedagent.Compact(ctx, nil, "", turns, 1000)
	if err != nil || !strings.Contains(s, "User asked: question") {
		t.Errorf("extract %q, %v", s, err)
	}
	// A failing model leaves the history as it was.
	s, keep, err = simplifiedagent.Compact(ctx, &scripted{}, "older", turns, 1000)
	if err == nil || s != "older" || len(keep) != 6 {
		t.Errorf("on error: %q, %d turns, %v", s, len(keep), err)
	}
}
