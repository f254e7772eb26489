package demo_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/markdown"
	"github.com/toolmark/toolmark/simplifiedagent"
	"github.com/toolmark/toolmark/simplifiedagent/demo"
)

// TestDemoAcknowledgesAttachments: the demo model names each file, its
// type and size and a text file's first line, and a hostile name or line
// stays text when the answer is rendered.
func TestDemoAcknowledgesAttachments(t *testing.T) {
	hostile := "<img src=x onerror=alert(1)>*.md"
	ups := []toolmark.Upload{
		{Name: "cat.png", MediaType: "image/png", Size: 29, Data: []byte("\x89PNG")},
		{Name: hostile, MediaType: "text/markdown", Size: 40, Data: []byte("# <script>alert(2)</script> [x](javascript:1)\nsecond line")},
		{Name: "report.pdf", MediaType: "application/pdf", Size: 900, Data: []byte("%PDF-1.4"), Text: "Quarterly report\nRevenue rose"},
	}
	m := demo.New()
	m.Delay = -1
	resp, err := m.GenerateContent(context.Background(), []llms.MessageContent{
		{Role: llms.ChatMessageTypeHuman, Parts: simplifiedagent.UserParts("What are these?", ups, 1000, false)},
	})
	if err != nil {
		t.Fatal(err)
	}
	answer := resp.Choices[0].Content
	html, err := markdown.Render(answer)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cat.png (image/png, 29 bytes)", "&lt;img src=x onerror=alert(1)&gt;*.md (text/markdown, 40 bytes)",
		"which begins: # &lt;script&gt;alert(2)&lt;/script&gt; [x](javascript:1)",
		"report.pdf (application/pdf, 900 bytes), which begins: Quarterly report"} {
		if !strings.Contains(html, want) {
			t.Errorf("the rendered answer lacks %q:\n%s", want, html)
		}
	}
	if strings.Contains(html, "<img") || strings.Contains(html, "<script") || strings.Contains(html, "href") || strings.Contains(answer, "second line") || strings.Contains(answer, "Revenue") {
		t.Errorf("hostile text became markup, or more than the first line was read:\n%s", html)
	}
}
