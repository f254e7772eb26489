package simplifiedagent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent"
	"github.com/toolmark/toolmark/simplifiedagent/demo"
	"github.com/toolmark/toolmark/simplifiedagent/tools"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// TestTodoAndSubagent: todo_list reports todo_update and no tag; a
// sub-agent's calls nest under its tag and its text stays out of the
// content.
func TestTodoAndSubagent(t *testing.T) {
	searcher := &fakeSearcher{docs: testDocs}
	sub := simplifiedagent.NewSubagent(&demo.Model{}, tools.NewSearchDocuments(searcher))
	m := &scripted{replies: []*llms.ContentChoice{
		{ToolCalls: []llms.ToolCall{
			toolCall("t1", "todo_list", `{"todos":[{"text":"look up resume","status":"in_progress"},{"text":"answer","status":"pending"}]}`),
			toolCall("s1", "subagent", `{"task":"How does Last-Event-ID work?"}`),
		}},
		{ToolCalls: []llms.ToolCall{toolCall("t2", "todo_list", `{"todos":[{"text":"look up resume","status":"done"},{"text":"answer","status":"completed"}]}`)}},
		{Content: "Clients resume with Last-Event-ID."},
	}}
	res, rec, err := runChecked(t, simplifiedagent.Request{Model: m, Input: "resume?",
		Tools: []simplifiedagent.Tool{simplifiedagent.NewTodoList(), sub}})
	if err != nil {
		t.Fatal(err)
	}
	content := rec.content(t)
	todos := rec.ofType(toolmark.EventTodoUpdate)
	if len(todos) != 2 {
		t.Fatalf("got %d todo_update events, want 2", len(todos))
	}
	if d := todos[0].Data.(toolmark.TodoUpdateData); d.ToolCallID != "t1" || len(d.Todos) != 2 || d.Todos[0].Status != toolmark.TodoInProgress {
		t.Errorf("first todo_update %+v", d)
	}
	if len(res.Todos) != 2 || res.Todos[1].Status != toolmark.TodoDone {
		t.Errorf("Result.Todos %+v, want both done", res.Todos)
	}
	spans := toolcallmarkup.Scan(content)
	if len(spans) != 2 || spans[0].Call.Type != "subagent" || spans[1].Parent != 0 ||
		spans[1].Call.ParentID != "s1" || spans[1].Call.Type != "search_documents" {
		t.Fatalf("tags %+v, want a subagent tag with a nested search", spans)
	}
	if strings.Contains(content, "todo_list") || strings.Contains(content, demo.Banner) {
		t.Errorf("content shows a todo tag or the sub-agent's text: %q", content)
	}
	var phases []string
	for _, e := range rec.ofType(toolmark.EventSubagentStatus) {
		phases = append(phases, e.Data.(toolmark.SubagentStatusData).Phase)
	}
	if got := strings.Join(phases, ","); got != "started,round,round,completed" {
		t.Errorf("subagent phases %s", got)
	}
	var subResult string
	for _, r := range res.ToolCalls {
		if r.ID == "s1" {
			subResult = r.Result
		}
	}
	if !strings.Contains(subResult, "Last-Event-ID") {
		t.Errorf("subagent result %q lacks the nested search's finding", subResult)
	}
}

// TestSubagentTicksItsStep: a sub-agent call naming its plan step ticks
// that item done when it ends (an update carrying its call id), and only
// that item; a step the plan does not hold changes nothing.
func TestSubagentTicksItsStep(t *testing.T) {
	sub := simplifiedagent.NewSubagent(&demo.Model{}, tools.NewSearchDocuments(&fakeSearcher{docs: testDocs}))
	m := &scripted{replies: []*llms.ContentChoice{
		{ToolCalls: []llms.ToolCall{
			toolCall("t1", "todo_list", `{"todos":[{"text":"Resume","status":"in_progress"},{"text":"Answer","status":"pending"}]}`),
			toolCall("s1", "subagent", `{"task":"How does Last-Event-ID work?","step":"Resume"}`),
			toolCall("s2", "subagent", `{"task":"What is a lease?","step":"Not in the plan"}`),
		}},
		{Content: "Clients resume with Last-Event-ID."},
	}}
	res, rec, err := runChecked(t, simplifiedagent.Request{Model: m, Input: "resume?",
		Tools: []simplifiedagent.Tool{simplifiedagent.NewTodoList(), sub}})
	if err != nil {
		t.Fatal(err)
	}
	todos := rec.ofType(toolmark.EventTodoUpdate)
	if len(todos) != 2 {
		t.Fatalf("got %d todo_update events, want 2 (the plan, then its step ticked)", len(todos))
	}
	d := todos[1].Data.(toolmark.TodoUpdateData)
	if d.ToolCallID != "s1" || d.Todos[0].Status != toolmark.TodoDone || d.Todos[1].Status != toolmark.TodoPending {
		t.Errorf("the tick %+v, want Resume done by s1 and Answer pending", d)
	}
	if res.Todos[0].Status != toolmark.TodoDone {
		t.Errorf("Result.Todos %+v, want Resume done", res.Todos)
	}
}

// TestDemoReplay runs the demo model on questions that make parallel
// searches and parallel sub-agents; the event log must still replay to the
// content, with every tag final and nested where it belongs.
func TestDemoReplay(t *testing.T) {
	search := tools.NewSearchDocuments(&fakeSearcher{docs: testDocs})
	for _, q := range []string{
		"How does cancellation work? What about crash recovery? And resume?",
		"Compare cancellation and crash recovery",
		"Research the disconnect handling",
	} {
		t.Run(q, func(t *testing.T) {
			res, rec, err := runChecked(t, simplifiedagent.Request{Model: &demo.Model{}, Input: q,
				Tools: []simplifiedagent.Tool{search, simplifiedagent.NewTodoList(), simplifiedagent.NewSubagent(&demo.Model{}, search)}})
			if err != nil {
				t.Fatal(err)
			}
			content := rec.content(t)
			if len(toolcallmarkup.Scan(content)) == 0 || !strings.Contains(content, demo.Banner) {
				t.Errorf("content %q", content)
			}
			for _, sp := range toolcallmarkup.Scan(content) {
				if sp.Call.Type == "search_documents" && strings.HasPrefix(q, "Compare") && sp.Call.ParentID == "" {
					t.Errorf("search %s is not nested in a sub-agent", sp.Call.ID)
				}
			}
			if len(rec.ofType(toolmark.EventRoundStarted)) != res.Rounds {
				t.Errorf("round_started events %d, rounds %d", len(rec.ofType(toolmark.EventRoundStarted)), res.Rounds)
			}
		})
	}
}

// TestDemoGolden keeps the demo model's event log for a simple question as
// a reference for clients (testdata/golden/demo_simple.jsonl).
func TestDemoGolden(t *testing.T) {
	_, rec, err := runChecked(t, simplifiedagent.Request{Model: &demo.Model{}, Input: "How do clients resume after a disconnect?",
		Tools: []simplifiedagent.Tool{tools.NewSearchDocuments(&fakeSearcher{docs: testDocs}), simplifiedagent.NewTodoList()}})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "demo_simple", rec.all())
}

// TestSubagentStandalone: outside Run the subagent tool runs its own loop
// and returns the answer.
func TestSubagentStandalone(t *testing.T) {
	sub := simplifiedagent.NewSubagent(&demo.Model{}, tools.NewSearchDocuments(&fakeSearcher{docs: testDocs}))
	got, err := sub.Call(context.Background(), `{"task":"How does Last-Event-ID work?"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "Last-Event-ID") || !strings.Contains(got, "[1] Resuming a stream — resume.md") {
		t.Errorf("answer %q", got)
	}
	if _, err := sub.Call(context.Background(), `{"task":""}`); err == nil {
		t.Error("empty task: want an error")
	}
}

// TestSubagentFails: a sub-agent whose model fails reports phase failed,
// its tag becomes error, and the parent run goes on.
func TestSubagentFails(t *testing.T) {
	sub := simplifiedagent.NewSubagent(&scripted{}) // no replies: its model fails
	m := &scripted{replies: []*llms.ContentChoice{
		{ToolCalls: []llms.ToolCall{toolCall("s1", "subagent", `{"task":"t"}`)}},
		{Content: "The sub-agent failed."},
	}}
	res, rec, err := runChecked(t, simplifiedagent.Request{Model: m, Input: "x", Tools: []simplifiedagent.Tool{sub},
		Retry: simplifiedagent.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var phases, msgs []string
	for _, e := range rec.ofType(toolmark.EventSubagentStatus) {
		phases = append(phases, e.Data.(toolmark.SubagentStatusData).Phase)
		msgs = append(msgs, e.Data.(toolmark.SubagentStatusData).Message)
	}
	if got := strings.Join(phases, ","); got != "started,round,failed" {
		t.Errorf("phases %s", got)
	}
	// People see the sentence of the model error, not the model's own words.
	want := toolmark.ModelErrorText(toolmark.EUNAVAILABLE)
	if len(msgs) != 3 || msgs[2] != want {
		t.Errorf("failed phase says %q, want %q", msgs, want)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Status != "error" || res.ToolCalls[0].Error != want {
		t.Errorf("records %+v", res.ToolCalls)
	}
}
