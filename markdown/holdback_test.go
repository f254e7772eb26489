package markdown

import "testing"

func TestHoldBack(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"some **bo", "some "},
		{"some **bold** and more", "some **bold** and more"},
		{"a `co", "a "},
		{"a `code` b", "a `code` b"},
		{"a ``x ` y", "a "},
		{"a ``x ` y`` z", "a ``x ` y`` z"},
		{"line one **open\n", "line one **open\n"}, // the line ended: shown
		{"done\nnow __under", "done\nnow "},
		{"**a** then **b", "**a** then "},
		{"escaped \\** stays", "escaped \\** stays"},
		{"```go\nx := **y", "```go\nx := **y"}, // inside a fence
		{"```go\nx\n```\nafter **b", "```go\nx\n```\nafter "},
		{"* a list item with **bo", "* a list item with "},
		{"`open code with **star", "" /* the code span opened first */},
		// A line holding a genuine tag ends a fence, as in the renderer.
		{"```go\nf\n<ToolCall type=\"t\" status=\"success\" toolCallId=\"c\"></ToolCall> x\nafter **b", "```go\nf\n<ToolCall type=\"t\" status=\"success\" toolCallId=\"c\"></ToolCall> x\nafter "},
	}
	for _, tt := range tests {
		if got := HoldBack(tt.in); got != tt.want {
			t.Errorf("HoldBack(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzHoldBack: HoldBack returns a prefix of its input and changes nothing
// before its last line.
func FuzzHoldBack(f *testing.F) {
	for _, s := range []string{"a **b", "x `y` z `w", "```\n**", "a\nb __c__ d **e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := HoldBack(s)
		if len(got) > len(s) || s[:len(got)] != got {
			t.Fatalf("HoldBack(%q) = %q: not a prefix", s, got)
		}
	})
}
