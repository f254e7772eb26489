package turnstate_test

import (
	"fmt"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/toolcallmarkup"
	"github.com/toolmark/toolmark/turnstate"
)

func Example() {
	s := turnstate.New()
	tc := toolcallmarkup.ToolCall{ID: "call_1", Type: "search_documents", Status: toolcallmarkup.StatusRunning,
		Attrs: []toolcallmarkup.Attr{{Key: "query", Value: "resume"}}}
	now := time.Now()
	for _, d := range []toolmark.Draft{
		{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "Looking it up.\n\n"}},
		{Type: toolmark.EventToolCallStarted, Data: toolmark.ToolCallData{ToolCallID: "call_1", Name: "search_documents", Markup: toolcallmarkup.OpenTag(tc)}},
	} {
		if err := s.Apply(d, now); err != nil {
			panic(err)
		}
	}
	// The user pressed Stop: end what is open, through ordinary events.
	for _, d := range s.CloseOpen(toolcallmarkup.StatusCancelled, "cancelled by the user") {
		_ = s.Apply(d, now)
	}
	c, _ := s.Call("call_1")
	fmt.Println(c.Stage, c.Status, c.Error)
	fmt.Println(s.Content())
	// Output:
	// end cancelled cancelled by the user
	// Looking it up.
	//
	// <ToolCall type="search_documents" status="cancelled" toolCallId="call_1" query="resume" error="cancelled by the user"></ToolCall>
}
