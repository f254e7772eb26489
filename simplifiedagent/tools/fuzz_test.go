package tools_test

import (
	"os"
	"testing"

	"github.com/toolmark/toolmark/simplifiedagent/tools"
)

// FuzzReadable: any page yields text without panicking, and the text of a
// page never contains its scripts.
func FuzzReadable(f *testing.F) {
	page, err := os.ReadFile("testdata/page.html")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(page))
	f.Add("<script>a<p>b</script><p>c")
	f.Add("<svg><script>x</svg>y")
	f.Fuzz(func(t *testing.T, s string) {
		tools.Readable(s)
	})
}
