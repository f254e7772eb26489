package markdown

import (
	"strings"
	"testing"
)

func TestMathPassThrough(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"display keeps its backslashes", `$$\int_0^1 x\,dx$$`, "<div class=\"math\">\\int_0^1 x\\,dx</div>\n"},
		{"display block", "$$\nx^2\n\\frac{a}{b}\n$$\nafter", "<div class=\"math\">x^2\n\\frac{a}{b}</div>\n<p>after</p>\n"},
		{"inline", `so $a_1 + b^*$ and $$x\,y$$ here`, "<p>so <span class=\"math\">a_1 + b^*</span> and <span class=\"math\">x\\,y</span> here</p>\n"},
		{"prices stay text", "costs $5 and $10 now", "<p>costs $5 and $10 now</p>\n"},
		{"a digit after the closing $", "a $x$5 b", "<p>a $x$5 b</p>\n"},
		{"escaped", "$$\n<script>&</script>\n$$", "<div class=\"math\">&lt;script&gt;&amp;&lt;/script&gt;</div>\n"},
		{"an escaped dollar stays text", `\$x$`, "<p>$x$</p>\n"},
		{"never a genuine tag", `$<ToolCall type="t" status="success" toolCallId="c1"></ToolCall>$`, ""},
		{"task list", "- [x] done\n- [ ] to do", "<ul>\n<li><input checked=\"\" disabled=\"\" type=\"checkbox\"> done</li>\n<li><input disabled=\"\" type=\"checkbox\"> to do</li>\n</ul>\n"},
	}
	r := New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Render(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if want := `data-tool-call-id="c1"`; !strings.Contains(got, want) || strings.Contains(got, `class="math"`) {
					t.Fatalf("got %q, want the widget and no math", got)
				}
				return
			}
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			if again := DefaultPolicy().Sanitize(got); again != got {
				t.Fatalf("the policy changes the output: %q", again)
			}
		})
	}
}
