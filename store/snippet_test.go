package store_test

import (
	"testing"

	"github.com/toolmark/toolmark/store"
)

func TestSnippetIsPlainText(t *testing.T) {
	content := "## Resume\n\n**What happens after a crash?** The `runner` sweeps it; see [the docs](https://e.com/x).\n\n- [x] read the log\n> quoted *text*\n" +
		`<ToolCall type="search_documents" status="success" toolCallId="c1" query="crash"></ToolCall>`
	got := store.Snippet(content, "crash", 200)
	want := "Resume What happens after a crash? The runner sweeps it; see the docs. read the log quoted *text*"
	if got != want {
		t.Errorf("Snippet = %q\nwant %q", got, want)
	}
}
