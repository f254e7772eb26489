package toolcallmarkup_test

import (
	"errors"
	"fmt"

	"github.com/toolmark/toolmark/toolcallmarkup"
)

func ExampleMarkup() {
	tc := toolcallmarkup.ToolCall{
		ID:     "call_1",
		Type:   "search_documents",
		Status: toolcallmarkup.StatusRunning,
		Attrs:  []toolcallmarkup.Attr{{Key: "query", Value: `"rust" & <go>`}},
	}
	fmt.Println(toolcallmarkup.Markup(tc))
	// Output:
	// <ToolCall type="search_documents" status="running" toolCallId="call_1" query="&quot;rust&quot; &amp; &lt;go&gt;"></ToolCall>
}

func ExampleParse() {
	content := `Searching. <ToolCall type="search" status="success" toolCallId="call_1" query="go" count="3"></ToolCall>` +
		` Model text: &lt;ToolCall type="search" status="running" toolCallId="call_2">`
	for _, tc := range toolcallmarkup.Parse(content) {
		fmt.Println(tc.ID, tc.Type, tc.Status, tc.Attrs)
	}
	// Output:
	// call_1 search success [{query go} {count 3}]
}

func ExampleRewrite() {
	content := `Answer: <ToolCall type="web_search" status="running" toolCallId="call_1" query="go"></ToolCall>`
	out, err := toolcallmarkup.Rewrite(content, "call_1", toolcallmarkup.Update{
		Status: toolcallmarkup.StatusError,
		Error:  "HTTP 503: $& is not a pattern",
	})
	fmt.Println(out, err)

	_, err = toolcallmarkup.Rewrite(out, "call_1", toolcallmarkup.Update{Status: toolcallmarkup.StatusSuccess})
	fmt.Println(errors.Is(err, toolcallmarkup.ErrFinal))

	_, err = toolcallmarkup.Rewrite(out, "call_10", toolcallmarkup.Update{Status: toolcallmarkup.StatusSuccess})
	fmt.Println(errors.Is(err, toolcallmarkup.ErrNotFound))
	// Output:
	// Answer: <ToolCall type="web_search" status="error" toolCallId="call_1" query="go" error="HTTP 503: $&amp; is not a pattern"></ToolCall> <nil>
	// true
	// true
}

func ExampleDocument() {
	d, _ := toolcallmarkup.NewDocument("")

	// Text streams in chunks; a chunk that ends in what could be the start
	// of a tag is held back until the next chunk decides.
	fmt.Printf("%q\n", d.AppendText("Let me look that up <"))
	fmt.Printf("%q\n", d.AppendText("ToolCall> for you.\n"))

	open, _ := d.Start(toolcallmarkup.ToolCall{
		ID:    "call_1",
		Type:  "search_documents",
		Attrs: []toolcallmarkup.Attr{{Key: "query", Value: "go generics"}},
	})
	fmt.Println(open)
	open, _ = d.Update("call_1", toolcallmarkup.Update{Status: toolcallmarkup.StatusRunning})
	fmt.Println(open)
	open, _ = d.Update("call_1", toolcallmarkup.Update{
		Status: toolcallmarkup.StatusSuccess,
		Extra:  []toolcallmarkup.Attr{{Key: "count", Value: "3"}},
	})
	fmt.Println(open)

	d.AppendText("\nFound 3 documents.")
	d.Flush()
	fmt.Println(d.String())
	fmt.Println(len(toolcallmarkup.Parse(d.String())), "tag")
	// Output:
	// "Let me look that up "
	// "&lt;ToolCall> for you.\n"
	// <ToolCall type="search_documents" status="pending" toolCallId="call_1" query="go generics">
	// <ToolCall type="search_documents" status="running" toolCallId="call_1" query="go generics">
	// <ToolCall type="search_documents" status="success" toolCallId="call_1" query="go generics" count="3">
	// Let me look that up &lt;ToolCall> for you.
	// <ToolCall type="search_documents" status="success" toolCallId="call_1" query="go generics" count="3"></ToolCall>
	// Found 3 documents.
	// 1 tag
}

func ExampleDocument_Finalize() {
	d, _ := toolcallmarkup.NewDocument(`<ToolCall type="search" status="running" toolCallId="call_1"></ToolCall>` +
		`<ToolCall type="fetch" status="success" toolCallId="call_2"></ToolCall>`)
	fmt.Println(d.Finalize(toolcallmarkup.StatusError, "interrupted"))
	fmt.Println(d.String())
	// Output:
	// [call_1]
	// <ToolCall type="search" status="error" toolCallId="call_1" error="interrupted"></ToolCall><ToolCall type="fetch" status="success" toolCallId="call_2"></ToolCall>
}

func ExampleRestoreText() {
	text := "Write `<ToolCall>` or `&lt;ToolCall>` literally."
	stored := toolcallmarkup.Neutralise(text)
	fmt.Println(stored)
	fmt.Println(toolcallmarkup.RestoreText(stored))
	// Output:
	// Write `&lt;ToolCall>` or `&amp;lt;ToolCall>` literally.
	// Write `<ToolCall>` or `&lt;ToolCall>` literally.
}

func ExampleOneLineTags() {
	// A tag as Perplexica writes it: the error text holds a raw line break.
	stored := "<ToolCall type=\"web_search\" status=\"error\" toolCallId=\"run-1\" error=\"Request failed:\n502\"></ToolCall>"
	fmt.Printf("%q\n", toolcallmarkup.Parse(stored)[0].Error)
	fmt.Println(toolcallmarkup.OneLineTags(stored))
	// Output:
	// "Request failed:\n502"
	// <ToolCall type="web_search" status="error" toolCallId="run-1" error="Request failed:&#10;502"></ToolCall>
}
