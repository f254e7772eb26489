package demo_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolmark/toolmark/simplifiedagent"
	"github.com/toolmark/toolmark/simplifiedagent/demo"
	"github.com/toolmark/toolmark/simplifiedagent/tools"
)

const filler = "This sentence pads the demo answer"

// TestDemoConfig: the load knobs set the number of tool calls and the
// answer's length, and the answer still starts with the banner.
func TestDemoConfig(t *testing.T) {
	const question = "How does resume work? And what happens on cancellation?"
	tests := []struct {
		name      string
		cfg       demo.Config
		wantCalls int    // search_documents calls
		wantBytes int    // 0: any length
		wantIn    string // the answer holds it
	}{
		{"usual", demo.Config{}, 2, 0, ""}, // two searches and a todo list
		{"five tools", demo.Config{Tools: 5}, 5, 0, ""},
		{"no tools", demo.Config{Tools: -1}, 0, 0, ""},
		{"long answer", demo.Config{Tools: 1, AnswerBytes: 4000}, 1, 4000, filler},
		{"short answer", demo.Config{Tools: 2, AnswerBytes: 200}, 2, 200, ""},
		{"shorter than the banner", demo.Config{AnswerBytes: 10}, 2, len(demo.Banner), ""},
		{"a code block", demo.Config{Tools: 1, AnswerBytes: 3000, AnswerShape: demo.ShapeCode}, 1, 3000, "```go\n\tfmt.Println("},
		{"mixed", demo.Config{Tools: 1, AnswerBytes: 3000, AnswerShape: demo.ShapeMixed}, 1, 3000, "\n- a **first** point"},
	}
	search := tools.NewSearchDocuments(docs)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ev events
			res, err := simplifiedagent.Run(context.Background(), simplifiedagent.Request{
				Model: &demo.Model{Config: tt.cfg},
				Input: question,
				Tools: []simplifiedagent.Tool{search, simplifiedagent.NewTodoList()},
			}, ev.emit)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			searches := 0
			for _, c := range res.ToolCalls {
				if c.Name == "search_documents" {
					searches++
				}
			}
			if searches != tt.wantCalls {
				t.Errorf("got %d searches, want %d (calls %+v)", searches, tt.wantCalls, res.ToolCalls)
			}
			if !strings.HasPrefix(res.Answer, demo.Banner) {
				t.Errorf("answer %q does not start with the banner", res.Answer)
			}
			if tt.wantBytes > 0 && len(res.Answer) != tt.wantBytes {
				t.Errorf("got an answer of %d bytes, want %d", len(res.Answer), tt.wantBytes)
			}
			if !strings.Contains(res.Answer, tt.wantIn) {
				t.Errorf("the answer lacks %q", tt.wantIn)
			}
			if !utf8.ValidString(res.Answer) {
				t.Errorf("answer is not valid UTF-8")
			}
		})
	}
}
