package e2e

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolmark/toolmark/markdown"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

type parityCall struct {
	ID       string      `json:"id"`
	Type     string      `json:"type"`
	Status   string      `json:"status"`
	Error    string      `json:"error"`
	ParentID string      `json:"parentId"`
	Attrs    [][2]string `json:"attrs"`
}

func toParity(tc toolcallmarkup.ToolCall) parityCall {
	p := parityCall{ID: tc.ID, Type: tc.Type, Status: string(tc.Status), Error: tc.Error, ParentID: tc.ParentID, Attrs: [][2]string{}}
	for _, a := range tc.Attrs {
		p.Attrs = append(p.Attrs, [2]string{a.Key, a.Value})
	}
	return p
}

// vectorContents returns every content string of the shared markup vectors.
func vectorContents(tb testing.TB) []string {
	tb.Helper()
	files, _ := filepath.Glob(filepath.Join(repoRoot(tb), "testdata", "toolcallmarkup", "*.json"))
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "expected" || k == "initial" || k == "content" || k == "text" || k == "returns") {
					out = append(out, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		walk(v)
	}
	return out
}

// randomMarkupish builds strings made of the pieces the parsers care about.
func randomMarkupish(rng *rand.Rand) string {
	pieces := []string{"<ToolCall", "</ToolCall>", "<toolcall", "&lt;", "&amp;", "amp;", "lt;", "ToolCall", " type=\"x\"",
		" status=\"running\"", " status=\"success\"", " toolCallId=\"c1\"", " toolCallId=\"c2\"", " query=\"a &amp; b &#10;\"", ">", "\"",
		"\n", " ", "text", "é", "`", "<", "&", "/", "&lt;/ToolCall>", "&amp;lt;ToolCall", " parentToolCallId=\"c1\""}
	var b strings.Builder
	for n := rng.IntN(14); n >= 0; n-- {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

// TestPageParity checks the page's JavaScript view of the markup against
// the Go packages: which tags content holds, RestoreText, and the status
// texts of the widgets, on the shared vectors and on random strings.
func TestPageParity(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node is not installed")
	}
	type parseCase struct {
		Content string       `json:"content"`
		Calls   []parityCall `json:"calls"`
	}
	type restoreCase struct {
		Text string `json:"text"`
		Want string `json:"want"`
	}
	type statusCase struct {
		Call map[string]any `json:"call"`
		Want string         `json:"want"`
	}
	var cases struct {
		Parse   []parseCase   `json:"parse"`
		Restore []restoreCase `json:"restore"`
		Status  []statusCase  `json:"status"`
	}
	inputs := vectorContents(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 3000; i++ {
		inputs = append(inputs, randomMarkupish(rng))
	}
	for _, s := range inputs {
		calls := []parityCall{}
		for _, tc := range toolcallmarkup.Parse(s) {
			calls = append(calls, toParity(tc))
		}
		cases.Parse = append(cases.Parse, parseCase{s, calls})
		cases.Restore = append(cases.Restore, restoreCase{s, toolcallmarkup.RestoreText(s)})
		neutral := toolcallmarkup.Neutralise(s)
		cases.Restore = append(cases.Restore, restoreCase{neutral, toolcallmarkup.RestoreText(neutral)})
	}

	texts := markdown.DefaultStatusTexts()
	long := strings.Repeat("long query ", 10) + "é"
	for _, typ := range []string{"search_documents", "web_search", "fetch_url", "subagent", "todo_list", "custom_tool", "", strings.Repeat("t", 70)} {
		for _, st := range []string{"pending", "running", "success", "error", "cancelled", "bogus"} {
			for _, attrs := range [][]toolcallmarkup.Attr{
				nil,
				{{Key: "query", Value: "rust"}, {Key: "count", Value: "5"}},
				{{Key: "query", Value: long}, {Key: "count", Value: "1"}},
				{{Key: "count", Value: "x"}},
				{{Key: "count", Value: "-1"}},
				{{Key: "url", Value: "https://example.com/" + long}},
				{{Key: "task", Value: "summarise the docs"}, {Key: "count", Value: "3"}},
			} {
				tc := toolcallmarkup.ToolCall{ID: "c", Type: typ, Status: toolcallmarkup.Status(st), Attrs: attrs}
				f := texts[typ]
				if f == nil {
					f = markdown.GenericStatusText
				}
				jsAttrs := map[string]string{}
				for _, a := range attrs {
					jsAttrs[a.Key] = a.Value
				}
				cases.Status = append(cases.Status, statusCase{
					Call: map[string]any{"id": "c", "type": typ, "status": st, "error": "", "parentId": "", "attrs": jsAttrs},
					Want: f(tc),
				})
			}
		}
	}

	withTags := 0
	for _, c := range cases.Parse {
		if len(c.Calls) > 0 {
			withTags++
		}
	}
	if withTags < 100 {
		t.Fatalf("only %d parse cases hold tags", withTags)
	}
	t.Logf("%d parse cases hold tags", withTags)

	b, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "cases.json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "parity.mjs", file)
	cmd.Dir = filepath.Join(repoRoot(t), "api", "web", "e2e")
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("parity.mjs: %v", err)
	}
}
