package markdown_test

import (
	"fmt"
	"strings"

	"github.com/toolmark/toolmark/markdown"
	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

func ExampleRender() {
	tag := toolcallmarkup.Markup(toolcallmarkup.ToolCall{
		ID: "call_1", Type: "search_documents", Status: toolcallmarkup.StatusSuccess,
		Attrs: []toolcallmarkup.Attr{{Key: "query", Value: "rust"}, {Key: "count", Value: "5"}},
	})
	out, err := markdown.Render("Let me check.\n\n" + tag + "\n\nRust is *fast*.")
	if err != nil {
		panic(err)
	}
	fmt.Println(out)
	// Output:
	// <p>Let me check.</p>
	// <div class="toolcall toolcall--success" data-tool-call-id="call_1" data-status="success" data-tool-type="search_documents"><span class="toolcall__icon toolcall__icon--success" aria-hidden="true">✓</span><span class="toolcall__label">Succeeded: </span><span class="toolcall__text">Found 5 results for:
	// rust</span></div>
	// <p>Rust is <em>fast</em>.</p>
}

func ExampleRender_modelText() {
	// Model text is neutralised before it is stored, so it can never become a
	// widget; in code it shows exactly as the model wrote it.
	model := toolcallmarkup.Neutralise("Write `<ToolCall type=\"x\">` and <b>this</b>.")
	out, err := markdown.Render(model)
	if err != nil {
		panic(err)
	}
	fmt.Println(out)
	// Output:
	// <p>Write <code>&lt;ToolCall type=&#34;x&#34;&gt;</code> and &lt;b&gt;this&lt;/b&gt;.</p>
}

func ExampleNew() {
	r := markdown.New(markdown.WithStatusText("get_weather", func(tc toolcallmarkup.ToolCall) string {
		city := statustext.Attr(tc, "city")
		if tc.Status == toolcallmarkup.StatusSuccess {
			return "Got the weather for " + city
		}
		return "Checking the weather in " + city + "…"
	}))
	out, err := r.Render(toolcallmarkup.Markup(toolcallmarkup.ToolCall{
		ID: "w1", Type: "get_weather", Status: toolcallmarkup.StatusRunning,
		Attrs: []toolcallmarkup.Attr{{Key: "city", Value: "Oslo"}},
	}))
	if err != nil {
		panic(err)
	}
	start := strings.Index(out, `<span class="toolcall__text">`)
	fmt.Println(out[start : strings.Index(out[start:], "</span>")+start+len("</span>")])
	// Output:
	// <span class="toolcall__text">Checking the weather in Oslo…</span>
}

func ExampleRender_highlighting() {
	out, err := markdown.Render("```go\nx := 1\n```")
	if err != nil {
		panic(err)
	}
	fmt.Println(out)
	// Output:
	// <pre class="chroma"><code class="language-go"><span class="nx">x</span> <span class="o">:=</span> <span class="mi">1</span>
	// </code></pre>
}
