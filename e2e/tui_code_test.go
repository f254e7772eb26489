package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolmark/toolmark/internal/app"
	fp "github.com/toolmark/toolmark/internal/harness/fakeprovider"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// TestTUICodeTabs: code indented with tabs keeps its indentation on the
// screen, at 120 and at 60 columns (TestCodeTabs is the renderer's).
func TestTUICodeTabs(t *testing.T) {
	code := fp.Reply{Text: []string{"Here:\n\n```go\nfunc f() {\n\tif x {\n", "\t\treturn\n\t}\n}\n```\n"}}
	model := fp.Start(t, fp.OpenAI, code, code)
	srv := testserver.Start(t, testserver.Options{Model: &app.ModelConfig{
		Provider: "openai", BaseURL: model.BaseURL(), APIKey: fp.APIKey, Name: "gpt-4o-mini",
	}})
	for _, width := range []int{120, 60} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			tm := startTerm(t, srv.URL, width, 30)
			tm.waitText("/help")
			tm.typeLine("Show me a function")
			screen := tm.waitText("return")
			t.Logf("at %d columns:\n%s", width, screen)
			lines := strings.Split(screen, "\n")
			indent := func(word string) int {
				for _, l := range lines {
					if strings.HasPrefix(strings.TrimSpace(l), word) {
						return len(l) - len(strings.TrimLeft(l, " "))
					}
				}
				return -1
			}
			fn, ifs, ret := indent("func f()"), indent("if x {"), indent("return")
			if fn < 0 || ifs-fn != 4 || ret-fn != 8 {
				t.Errorf("indentation func %d, if %d, return %d: want the tabs as 4 and 8 columns", fn, ifs, ret)
			}
		})
	}
}
