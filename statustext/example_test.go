package statustext_test

import (
	"fmt"

	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

func ExampleText() {
	tc := toolcallmarkup.ToolCall{ID: "call_1", Type: "search_documents", Status: toolcallmarkup.StatusRunning,
		Attrs: []toolcallmarkup.Attr{{Key: "query", Value: "resume"}}}
	fmt.Println(statustext.Text(tc))
	tc.Status, tc.Attrs = toolcallmarkup.StatusSuccess, append(tc.Attrs, toolcallmarkup.Attr{Key: "count", Value: "3"})
	fmt.Println(statustext.Text(tc))
	fmt.Println(statustext.Text(toolcallmarkup.ToolCall{Type: "get_weather", Status: toolcallmarkup.StatusError}))
	// Output:
	// Searching knowledge base for:
	// resume
	// Found 3 results for:
	// resume
	// get_weather failed
}

func ExampleLines() {
	head, subject := statustext.Lines("Fetching:\nhttps://example.com/")
	fmt.Printf("%q %q\n", head, subject)
	head, subject = statustext.Lines(statustext.Thinking)
	fmt.Printf("%q %q\n", head, subject)
	// Output:
	// "Fetching:" "https://example.com/"
	// "Thinking…" ""
}
