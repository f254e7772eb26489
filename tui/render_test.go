package tui

import (
	"encoding/json"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/markdown"
	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// acc applies made-up events to a new Accumulator.
func acc(t *testing.T, events ...any) *client.Accumulator {
	t.Helper()
	a := client.NewAccumulator(nil)
	for i := 0; i < len(events); i += 2 {
		data, _ := json.Marshal(events[i+1])
		ev, err := client.DecodeEvent(toolmark.Event{Seq: int64(i/2 + 1), Type: events[i].(toolmark.EventType), Data: data})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Add(ev); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

func call(st toolcallmarkup.Status, d toolmark.ToolCallData) toolmark.ToolCallData {
	tc := toolcallmarkup.ToolCall{ID: "c1", Type: "fetch_url", Status: st, Attrs: []toolcallmarkup.Attr{{Key: "url", Value: "http://x/\x1b]0;t\x07"}}}
	d.ToolCallID, d.Name, d.Status, d.Markup = "c1", "fetch_url", string(st), toolcallmarkup.OpenTag(tc)
	return d
}

// TestToolLineStages: a call's collapsed line is its mark and the status
// text the page shows at each stage; its arguments only in the expanded
// view.
func TestToolLineStages(t *testing.T) {
	r := newRenderer(100, "dark")
	steps := []any{toolmark.EventToolCallStarted, call(toolcallmarkup.StatusPending, toolmark.ToolCallData{})}
	view := func() string { return Sanitize(r.turn(turnView{acc: acc(t, steps...), frame: "⠋"})) }
	if got, want := view(), "⠋ Preparing to fetch a page…"; got != want {
		t.Errorf("start: got %q, want %q", got, want)
	}
	steps = append(steps, toolmark.EventToolCallDelta, call(toolcallmarkup.StatusPending, toolmark.ToolCallData{Chunk: `{"url":"http://x`, Accumulated: `{"url":"http://x`, Arguments: map[string]any{"url": "http://x"}}))
	if got, want := view(), "⠋ Preparing to fetch a page…"; got != want {
		t.Errorf("streaming: got %q, want %q", got, want)
	}
	steps = append(steps, toolmark.EventToolCallRunning, call(toolcallmarkup.StatusRunning, toolmark.ToolCallData{}))
	if got, want := view(), "⠋ Fetching: http://x/"; got != want {
		t.Errorf("running: got %q, want %q", got, want)
	}
	steps = append(steps, toolmark.EventToolCallError, call(toolcallmarkup.StatusError, toolmark.ToolCallData{Error: "refused \x1b[41mred"}))
	if got, want := view(), "✗ Could not fetch: http://x/ refused red"; got != want {
		t.Errorf("end: got %q, want %q", got, want)
	}
	if raw := r.turn(turnView{acc: acc(t, steps...), frame: "⠋"}); strings.Contains(raw, "\x1b]0;") || strings.Contains(raw, "\x1b[41m") {
		t.Errorf("a server's escape sequence reached the output: %q", raw)
	}
	if got := Sanitize(r.turn(turnView{acc: acc(t, steps...), expanded: true})); !strings.Contains(got, `"url": "http://x"`) || !strings.Contains(got, "error") {
		t.Errorf("expanded: %q", got)
	}
}

// TestToolLineNarrow: a sub-agent's call with several arguments reads as
// the page's status text, whole, in 60 columns; its arguments are in the
// expanded view.
func TestToolLineNarrow(t *testing.T) {
	task := "Look up explain snapshots"
	ev := func(st toolcallmarkup.Status) toolmark.ToolCallData {
		tc := toolcallmarkup.ToolCall{ID: "s1", Type: "subagent", Status: st, Attrs: []toolcallmarkup.Attr{{Key: "task", Value: task}}}
		return toolmark.ToolCallData{ToolCallID: "s1", Name: "subagent", Status: string(st), Markup: toolcallmarkup.OpenTag(tc), StatusText: statustext.Text(tc)}
	}
	args := `{"step":"Explain snapshots","task":"` + task + `"}`
	d, delta, running, done := ev(toolcallmarkup.StatusPending), ev(toolcallmarkup.StatusPending), ev(toolcallmarkup.StatusRunning), ev(toolcallmarkup.StatusSuccess)
	delta.Chunk, delta.Accumulated = args, args
	done.Result = "a long report of the sub-agent"
	r := newRenderer(60, "dark")
	a := acc(t, toolmark.EventToolCallStarted, d, toolmark.EventToolCallDelta, delta, toolmark.EventToolCallRunning, running, toolmark.EventToolCallSuccess, done)
	if got, want := Sanitize(r.turn(turnView{acc: a, frame: "⠋"})), "✓ Sub-agent finished: "+task; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := Sanitize(r.turn(turnView{acc: a, expanded: true})); !strings.Contains(got, `"step":"Explain snapshots"`) {
		t.Errorf("the expanded view lacks the arguments: %q", got)
	}
}

func TestTodosAndEndLine(t *testing.T) {
	r := newRenderer(80, "dark")
	a := acc(t,
		toolmark.EventTodoUpdate, toolmark.TodoUpdateData{Todos: []toolmark.Todo{{Text: "one", Status: toolmark.TodoDone}, {Text: "two", Status: toolmark.TodoCancelled}}},
		toolmark.EventTextDelta, toolmark.TextDeltaData{Text: "partial"},
		toolmark.EventTurnCancelled, toolmark.TurnEndData{Status: toolmark.TurnCancelled})
	got := Sanitize(r.turn(turnView{acc: a}))
	for _, want := range []string{"Plan 1/2", "✓ one", "⊘ two", "partial", "⊘ Answer cancelled"} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "Answer cancelled"); n != 1 {
		t.Errorf("%d end lines", n)
	}
}

// TestFinishedBlocks: a block is finished at a blank line, not at one
// inside a code fence, and not at blank lines before any text.
func TestFinishedBlocks(t *testing.T) {
	for _, tt := range []struct{ in, done string }{
		{"", ""},
		{"\n\n", ""},
		{"One.", ""},
		{"One.\n", ""},
		{"One.\n\n", "One.\n\n"},
		{"One.\n\nTwo", "One.\n\n"},
		{"One.\n \nTwo.\n\n\nThree", "One.\n \nTwo.\n\n\n"},
		{"```go\nx := 1\n\ny := 2\n", ""},
		{"```go\nx := 1\n\ny := 2\n```\n\nAfter", "```go\nx := 1\n\ny := 2\n```\n\n"},
		{"Text\n\n```\ncode\n\n", "Text\n\n"},
	} {
		done, rest := finishedBlocks(tt.in)
		if done != tt.done || done+rest != tt.in {
			t.Errorf("finishedBlocks(%q) = %q, %q; want done %q", tt.in, done, rest, tt.done)
		}
	}
}

// TestPlainOpenFence: the trailing block's code fence left open gets the
// language "text", short or long; a closed fence and text without one
// are left as they are.
func TestPlainOpenFence(t *testing.T) {
	long := strings.Repeat("x := 1 // code\n", markdown.LiveHighlightMax/15+1)
	for _, tt := range []struct{ name, in, want string }{
		{"no fence", "Some text.\nMore.", "Some text.\nMore."},
		{"short and open", "```go\nx := 1\n", "```text\nx := 1\n"},
		{"open, fence line only", "```go", "```go"},
		{"long and open", "```go\n" + long, "```text\n" + long},
		{"long, open, after text", "Here:\n  ````go title\n" + long, "Here:\n  ````text\n" + long},
		{"long and open, tildes", "~~~python\n" + long, "~~~text\n" + long},
		{"long and closed", "```go\n" + long + "```\n", "```go\n" + long + "```\n"},
		{"a closed fence, then a long open one", "```sh\nls\n```\n```go\n" + long, "```sh\nls\n```\n```text\n" + long},
	} {
		if got := plainOpenFence(tt.in); got != tt.want {
			t.Errorf("%s: got %.60q…, want %.60q…", tt.name, got, tt.want)
		}
	}
}

// TestCodeTabs: a tab indenting code keeps its indentation, finished and
// while it streams.
func TestCodeTabs(t *testing.T) {
	r := newRenderer(80, "dark")
	src := "```go\nfunc f() {\n\tif x {\n\t\treturn\n\t}\n}\n```"
	for _, live := range []bool{false, true} {
		out := Sanitize(strings.Join(r.markdown(nil, src, live), "\n"))
		if !strings.Contains(out, "    if x {") || !strings.Contains(out, "        return") {
			t.Errorf("live %v: the tabs' indentation is lost:\n%s", live, out)
		}
	}
}

// TestUsageLine: an answer's model and tokens, stored or from its end, as
// the page writes them (the model's id made safe for the terminal).
func TestUsageLine(t *testing.T) {
	e := &entry{acc: client.NewAccumulator(nil), usage: &toolmark.Usage{InputTokens: 1649, OutputTokens: 216}}
	if got := usageLine(e); got != "  1,649 tokens in · 216 out" {
		t.Errorf("got %q", got)
	}
	e.model = "gpt\x1b[31m"
	if got := usageLine(e); got != "  gpt · 1,649 tokens in · 216 out" {
		t.Errorf("with its model: got %q", got)
	}
	if got := usageLine(&entry{acc: client.NewAccumulator(nil), model: "claude"}); got != "  claude" {
		t.Errorf("a model without usage: got %q", got)
	}
	if got := usageLine(&entry{acc: client.NewAccumulator(nil)}); got != "" {
		t.Errorf("no usage: got %q", got)
	}
	if got := thousands(1234567); got != "1,234,567" {
		t.Errorf("thousands: %q", got)
	}
}

// TestBlockSpacing: blocks are one blank line apart, as on the page,
// whatever margins glamour gives a list, a code block, a quote, a table or
// a heading — finished and while the answer streams — and the answer
// starts with its first line of text.
func TestBlockSpacing(t *testing.T) {
	src := "Sources:\n\n- [1] a\n- [2] b\n\n## Head\n\nText.\n\n```go\nx := 1\n```\n\n> quote\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nEnd."
	want := []string{"Sources:", "", "• [1] a", "• [2] b", "", "## Head", "", "Text.", "", "x := 1", "", "│ quote", "", "a │ b", "─┼─", "1 │ 2", "", "End."}
	for _, live := range []bool{false, true} {
		r := newRenderer(60, "dark")
		var got []string
		for _, l := range r.markdown(nil, src, live) {
			l = strings.Join(strings.Fields(ansi.Strip(l)), " ")
			got = append(got, regexp.MustCompile(`─+`).ReplaceAllString(l, "─"))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("live %v: got\n%s\nwant\n%s", live, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// TestStoppedAnswerAsPage: an answer stopped inside an emphasis or a code
// span shows its text as the page renders the same stored text — the
// marker as written, since an unclosed one is text in CommonMark — and not
// held back as while it streamed.
func TestStoppedAnswerAsPage(t *testing.T) {
	tags := regexp.MustCompile(`<[^>]*>`)
	for _, text := range []string{"Stopped in *emphasis", "Stopped in **strong", "Stopped in _emph", "Stopped in `code"} {
		page, err := markdown.Render(text)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSpace(html.UnescapeString(tags.ReplaceAllString(page, "")))
		for typ, end := range map[toolmark.EventType]toolmark.TurnStatus{toolmark.EventTurnCancelled: toolmark.TurnCancelled, toolmark.EventTurnFailed: toolmark.TurnFailed} {
			a := acc(t, toolmark.EventTextDelta, toolmark.TextDeltaData{Text: text}, typ, toolmark.TurnEndData{Status: end})
			if !a.Status().Final() {
				t.Fatalf("%s: the turn did not end", end)
			}
			lines := newRenderer(80, "dark").turnLines(nil, turnView{acc: a})
			if got := strings.TrimSpace(ansi.Strip(lines[0])); got != want {
				t.Errorf("%q %s: got %q, want the page's %q", text, end, got, want)
			}
		}
	}
}
