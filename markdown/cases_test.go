package markdown

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toolmark/toolmark/internal/harness/mdcases"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// TestCases renders every case of testdata/*.txt (except xss.txt) and
// compares it with the expected HTML. Run with -update to rewrite the
// expected HTML after a deliberate change, then review the diff.
func TestCases(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	r := New()
	total := 0
	for _, file := range files {
		if filepath.Base(file) == "xss.txt" {
			continue
		}
		cases := mdcases.Read(t, file)
		for i, c := range cases {
			total++
			name := strings.TrimSuffix(filepath.Base(file), ".txt") + "/" + strconv.Itoa(c.No) + ":" + c.Description
			got := strings.TrimRight(mustRender(t, r, c.Markdown), "\n")
			if *update {
				cases[i].Expected = got
				continue
			}
			t.Run(name, func(t *testing.T) {
				if got != c.Expected {
					t.Errorf("markdown:\n%s\ngot:\n%s\nwant:\n%s", c.Markdown, got, c.Expected)
				}
				if p := checkSafe(got); len(p) != 0 {
					t.Errorf("unsafe output: %v", p)
				}
				if w, want := widgets(got), len(toolcallmarkup.Scan(c.Markdown)); w != want {
					t.Errorf("got %d widgets, want %d (one per genuine element)", w, want)
				}
			})
		}
		if *update {
			mdcases.Write(t, file, cases)
		}
	}
	t.Logf("%d cases in %d files", total, len(files)-1)
}

// TestPolicyIdempotent checks that the output of every case is already what
// DefaultPolicy allows: sanitising it again changes nothing, widgets
// included (Render splices them in after the policy pass).
func TestPolicyIdempotent(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	r, policy := New(), DefaultPolicy()
	for _, file := range files {
		if filepath.Base(file) == "xss.txt" {
			continue
		}
		for _, c := range mdcases.Read(t, file) {
			out := mustRender(t, r, c.Markdown)
			if again := policy.Sanitize(out); again != out {
				t.Errorf("%s/%d: sanitising the output again changed it\nout:   %s\nagain: %s", file, c.No, out, again)
			}
		}
	}
}
