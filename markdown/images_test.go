package markdown_test

import (
	"strings"
	"testing"

	"github.com/toolmark/toolmark/markdown"
)

// TestImagesAttribute: a successful call whose tag counts images says so
// to the page (data-images); another value, or another status, does not.
func TestImagesAttribute(t *testing.T) {
	tests := []struct {
		tag, want string
	}{
		{`<ToolCall type="x_img" status="success" toolCallId="c1" images="1"></ToolCall>`, `data-images="1"`},
		{`<ToolCall type="x_img" status="running" toolCallId="c1" images="1"></ToolCall>`, ""},
		{`<ToolCall type="x_img" status="success" toolCallId="c1" images="1&quot; onerror=&quot;x"></ToolCall>`, ""},
		{`<ToolCall type="x_img" status="success" toolCallId="c1" images="100"></ToolCall>`, ""},
	}
	for _, tt := range tests {
		html, err := markdown.Render(tt.tag)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(html, "data-images"); got != (tt.want != "") || (tt.want != "" && !strings.Contains(html, tt.want)) {
			t.Errorf("%s:\n%s", tt.tag, html)
		}
		if strings.Contains(html, "onerror") {
			t.Errorf("%s: %s", tt.tag, html)
		}
	}
}
