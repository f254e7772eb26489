package store_test

import (
	"encoding/json"
	"fmt"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
)

// ExampleReplay rebuilds a message from its stored snapshot and the events
// logged after it, as SweepExpired does after a crash and a client that
// follows the stream does as it goes.
func ExampleReplay() {
	snapshot := "Searching. " // the content saved at seq 1
	data := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	events := []toolmark.Event{
		{Seq: 2, Type: toolmark.EventToolCallStarted, Data: data(toolmark.ToolCallData{
			ToolCallID: "call_1", Markup: `<ToolCall type="search_documents" status="pending" toolCallId="call_1" query="go">`})},
		{Seq: 3, Type: toolmark.EventToolCallSuccess, Data: data(toolmark.ToolCallData{
			ToolCallID: "call_1", Markup: `<ToolCall type="search_documents" status="success" toolCallId="call_1" query="go" count="2">`})},
		{Seq: 4, Type: toolmark.EventTextDelta, Data: data(toolmark.TextDeltaData{Text: " Found two."})},
	}
	content, err := store.Replay(snapshot, events)
	if err != nil {
		panic(err)
	}
	fmt.Println(content)
	// Output:
	// Searching. <ToolCall type="search_documents" status="success" toolCallId="call_1" query="go" count="2"></ToolCall> Found two.
}
