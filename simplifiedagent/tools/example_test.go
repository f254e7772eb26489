package tools_test

import (
	"fmt"
	"net/netip"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent/tools"
)

func ExampleReadable() {
	title, text := tools.Readable(`<html><head><title>Docs</title><script>x()</script></head>
<body><nav>Menu</nav><h1>Resume</h1><p>Send   <b>Last-Event-ID</b>.</p><ul><li>one</li><li>two</li></ul></body></html>`)
	fmt.Printf("%s\n---\n%s\n", title, text)
	// Output:
	// Docs
	// ---
	// Resume
	//
	// Send Last-Event-ID.
	//
	// - one
	// - two
}

func ExampleFormatHits() {
	fmt.Print(tools.FormatHits("resume", []toolmark.DocumentHit{
		{Source: "resume.md", Title: "Resuming a stream", Snippet: "Clients send\nLast-Event-ID."},
	}))
	// Output:
	// Found 1 document for "resume".
	//
	// [1] Resuming a stream (resume.md)
	// Clients send Last-Event-ID.
}

func ExamplePublicAddr() {
	for _, a := range []string{"93.184.216.34", "127.0.0.1", "169.254.169.254", "::ffff:10.0.0.1"} {
		fmt.Println(a, tools.PublicAddr(netip.MustParseAddr(a)))
	}
	// Output:
	// 93.184.216.34 true
	// 127.0.0.1 false
	// 169.254.169.254 false
	// ::ffff:10.0.0.1 false
}
