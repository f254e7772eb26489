package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// exampleServer serves one made-up turn: a search whose arguments stream
// in two chunks, then an answer whose text names a "<ToolCall" tag (sent
// neutralised, as the server does).
func exampleServer() *httptest.Server {
	search := toolcallmarkup.ToolCall{ID: "call_1", Type: "search_documents", Status: toolcallmarkup.StatusPending}
	tag := func(st toolcallmarkup.Status, attrs ...toolcallmarkup.Attr) string {
		tc := search
		tc.Status, tc.Attrs = st, attrs
		return toolcallmarkup.OpenTag(tc)
	}
	q := toolcallmarkup.Attr{Key: "query", Value: "resume"}
	call := func(st toolcallmarkup.Status, d toolmark.ToolCallData, attrs ...toolcallmarkup.Attr) toolmark.ToolCallData {
		d.ToolCallID, d.Name, d.Status, d.Markup = "call_1", "search_documents", string(st), tag(st, attrs...)
		return d
	}
	events := []struct {
		typ  toolmark.EventType
		data any
	}{
		{toolmark.EventTurnStarted, toolmark.TurnStartedData{Model: "demo"}},
		{toolmark.EventTodoUpdate, toolmark.TodoUpdateData{Todos: []toolmark.Todo{{Text: "Find the docs", Status: toolmark.TodoInProgress}}}},
		{toolmark.EventToolCallStarted, call(toolcallmarkup.StatusPending, toolmark.ToolCallData{})},
		{toolmark.EventToolCallDelta, call(toolcallmarkup.StatusPending, toolmark.ToolCallData{Chunk: `{"query":`, Accumulated: `{"query":`})},
		{toolmark.EventToolCallDelta, call(toolcallmarkup.StatusPending, toolmark.ToolCallData{Chunk: `"resume"}`, Accumulated: `{"query":"resume"}`,
			Arguments: map[string]any{"query": "resume"}})},
		{toolmark.EventToolCallRunning, call(toolcallmarkup.StatusRunning, toolmark.ToolCallData{}, q)},
		{toolmark.EventToolCallSuccess, call(toolcallmarkup.StatusSuccess, toolmark.ToolCallData{Result: "3 results"}, q,
			toolcallmarkup.Attr{Key: "count", Value: "3"})},
		{toolmark.EventTodoUpdate, toolmark.TodoUpdateData{Todos: []toolmark.Todo{{Text: "Find the docs", Status: toolmark.TodoDone}}}},
		{toolmark.EventTextDelta, toolmark.TextDeltaData{Text: "Resume with "}},
		{toolmark.EventTextDelta, toolmark.TextDeltaData{Text: "Last-Event-ID; a &lt;ToolCall tag is text here."}},
		{toolmark.EventTurnCompleted, toolmark.TurnEndData{Status: toolmark.TurnCompleted}},
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		after, _ := strconv.Atoi(r.Header.Get("Last-Event-ID"))
		w.Header().Set("Content-Type", "text/event-stream")
		for i, e := range events[after:] {
			seq := after + i + 1
			data, _ := json.Marshal(e.data)
			frame, _ := json.Marshal(toolmark.Event{Seq: int64(seq), TurnID: "turn_1", Type: e.typ, Data: data})
			client.WriteFrame(w, client.Frame{ID: strconv.Itoa(seq), Event: string(e.typ), Data: string(frame)})
		}
	}))
}

// Events is an iterator over a turn's events with typed data; it
// reconnects and resumes by itself.
func ExampleClient_Events() {
	srv := exampleServer()
	defer srv.Close()
	c := client.New(srv.URL)

	for ev, err := range c.Events(context.Background(), "turn_1", 0) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch d := ev.Data.(type) {
		case toolmark.TextDeltaData:
			fmt.Printf("%d text %q\n", ev.Seq, d.Text)
		case toolmark.ToolCallData:
			fmt.Printf("%d %s %s\n", ev.Seq, ev.Type, d.Name)
		case toolmark.TurnEndData:
			fmt.Printf("%d end %s\n", ev.Seq, d.Status)
		}
	}
	// Output:
	// 3 tool_call_started search_documents
	// 4 tool_call_delta search_documents
	// 5 tool_call_delta search_documents
	// 6 tool_call_running search_documents
	// 7 tool_call_success search_documents
	// 9 text "Resume with "
	// 10 text "Last-Event-ID; a &lt;ToolCall tag is text here."
	// 11 end completed
}

// An Accumulator gives the answer so far — its text as a reader sees it,
// the tool calls with their stages and parsed arguments, the task list.
func ExampleAccumulator() {
	srv := exampleServer()
	defer srv.Close()
	c := client.New(srv.URL)

	acc := client.NewAccumulator(nil)
	for ev, err := range c.Events(context.Background(), "turn_1", 0) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		if err := acc.Add(ev); err != nil {
			fmt.Println("error:", err)
			return
		}
	}
	fmt.Println(acc.Status())
	fmt.Println(acc.Text())
	for _, tc := range acc.ToolCalls() {
		fmt.Println(tc.Name, tc.Stage, tc.Status, tc.Args["query"], tc.Result)
	}
	for _, td := range acc.Todos() {
		fmt.Println(td.Status, td.Text)
	}
	// Output:
	// completed
	// Resume with Last-Event-ID; a <ToolCall tag is text here.
	// search_documents end success resume 3 results
	// done Find the docs
}

// Stream follows a turn and calls the handlers: content as (chunk,
// accumulated), a tool call's start with its name and title, and each
// stage of each tool call, its end exactly once.
func ExampleClient_Stream() {
	srv := exampleServer()
	defer srv.Close()
	c := client.New(srv.URL)

	acc, err := c.Stream(context.Background(), "turn_1", &client.Handlers{
		Content: func(chunk, accumulated string) {
			fmt.Printf("content %q (%d bytes so far)\n", chunk, len(accumulated))
		},
		Start: func(s client.ToolStart) {
			fmt.Printf("start %s %q\n", s.Name, s.Title)
		},
		ToolCall: func(u client.ToolCallUpdate) {
			switch u.Stage {
			case client.StageStart:
				fmt.Println("stage start", u.Call.ID)
			case client.StageStreaming:
				fmt.Printf("streaming chunk %s, params %s\n", u.Chunk, u.Params)
			case client.StageRunning:
				fmt.Println("running with", u.Call.Args)
			case client.StageEnd:
				fmt.Println("end", u.Call.Status, u.Result+u.Err)
			}
		},
		Todos: func(todos []toolmark.Todo) { fmt.Println("todos", todos) },
		End:   func(end toolmark.TurnEndData) { fmt.Println("end of turn:", end.Status) },
	})
	fmt.Println(err, len(acc.Text()))
	// Output:
	// todos [{Find the docs in_progress}]
	// start search_documents "Preparing search…"
	// stage start call_1
	// streaming chunk {"query":, params {"query":
	// streaming chunk "resume"}, params {"query":"resume"}
	// running with map[query:resume]
	// end success 3 results
	// todos [{Find the docs done}]
	// content "Resume with " (12 bytes so far)
	// content "Last-Event-ID; a <ToolCall tag is text here." (56 bytes so far)
	// end of turn: completed
	// <nil> 56
}

// Ending the context stops following a turn, not the turn itself: it goes
// on on the server, and Events from the last seq seen picks it up.
// CancelTurnOnStop makes stopping early cancel the turn too.
func ExampleCancelTurnOnStop() {
	var cancelled bool
	srv := exampleServer()
	defer srv.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/turns/{id}/cancel", func(w http.ResponseWriter, r *http.Request) {
		cancelled = true
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"turn":{"id":"turn_1","status":"cancelled"}}`)
	})
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, srv.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	front := httptest.NewServer(mux)
	defer front.Close()
	c := client.New(front.URL)

	var last int64
	for ev := range c.Events(context.Background(), "turn_1", 0) {
		last = ev.Seq
		if ev.Type == toolmark.EventToolCallRunning {
			break // stop following: the turn goes on
		}
	}
	fmt.Println("stopped after", last, "cancelled:", cancelled)

	for ev := range c.Events(context.Background(), "turn_1", last, client.CancelTurnOnStop()) {
		if ev.Type == toolmark.EventToolCallSuccess {
			break // stop following and cancel the turn
		}
	}
	fmt.Println("cancelled:", cancelled)
	// Output:
	// stopped after 6 cancelled: false
	// cancelled: true
}
