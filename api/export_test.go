package api_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

type exportJSON struct {
	Messages []struct {
		toolmark.Message
		ToolCalls []toolmark.ToolCallRecord `json:"toolCalls"`
		Todos     []toolmark.Todo           `json:"todos"`
		Error     string                    `json:"error"`
	} `json:"messages"`
}

// TestExportMarkdownWhole compares the Markdown export with the JSON one:
// a research turn with a refused fetch, and a research turn stopped half
// way. Every call of the JSON export (a sub-agent's nested ones included)
// is a list item of its answer, indented by its depth, with the mark of
// its status and its error; every plan item has its final state; the
// stopped answer says so; no blank lines pile up.
func TestExportMarkdownWhole(t *testing.T) {
	srv, alice, _ := tokenServerWith(t, testserver.Options{DemoDelay: 20 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conv := alice.newConversation()
	first := alice.postTurn(conv, "Research how cancellation works; what happens after a crash? Read http://127.0.0.1:9/notes too.")
	if _, err := srv.App.Runner.Wait(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	second := alice.postTurn(conv, "Research how leases work; then compare resuming a stream with cancelling a turn. Make a plan.")
	var js exportJSON
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		alice.mustJSON("GET", "/api/conversations/"+conv+"/export?format=json", "", 200, &js)
		if n := len(js.Messages); n == 4 && len(js.Messages[3].ToolCalls) >= 3 && len(js.Messages[3].Todos) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second turn started no tool call")
		}
	}
	alice.mustJSON("POST", "/api/turns/"+second.ID+"/cancel", "", 202, nil)
	if tt, err := srv.App.Runner.Wait(ctx, second.ID); err != nil || tt.Status != toolmark.TurnCancelled {
		t.Fatalf("second turn: %v %v", tt.Status, err)
	}
	alice.mustJSON("GET", "/api/conversations/"+conv+"/export?format=json", "", 200, &js)
	st, _, body := alice.do("GET", "/api/conversations/"+conv+"/export?format=markdown", "")
	if st != 200 {
		t.Fatalf("markdown export: %d", st)
	}
	md := string(body)
	if strings.Contains(md, "\n\n\n") || strings.Contains(md, "<ToolCall") {
		t.Errorf("blank lines pile up or markup is left:\n%s", md)
	}
	sections := strings.Split(md, "\n## ")[1:]
	if len(sections) != len(js.Messages) {
		t.Fatalf("%d sections for %d messages:\n%s", len(sections), len(js.Messages), md)
	}
	marks := map[string]string{"success": "✓", "error": "✗", "cancelled": "⊘", "running": "…", "pending": "…"}
	var nested, failed, cancelled int
	for i, m := range js.Messages {
		sec := sections[i]
		if m.Role != toolmark.RoleAssistant {
			continue
		}
		// The calls' list items, each with its depth and mark.
		var want, got []string
		depth := map[string]int{}
		for _, c := range m.ToolCalls {
			if c.ParentID != "" {
				depth[c.ID] = depth[c.ParentID] + 1
				nested++
			}
			want = append(want, fmt.Sprintf("%s- %s", strings.Repeat("  ", depth[c.ID]), marks[c.Status]))
			if c.Error != "" && !strings.Contains(sec, c.Error) {
				t.Errorf("message %d: the error of %s (%q) is missing:\n%s", i, c.Name, c.Error, sec)
			}
			switch c.Status {
			case "error":
				failed++
			case "cancelled":
				cancelled++
			}
		}
		for _, l := range strings.Split(sec, "\n") {
			for _, mk := range []string{"✓", "✗", "⊘", "…"} {
				if rest := strings.TrimLeft(l, " "); strings.HasPrefix(rest, "- "+mk+" ") {
					got = append(got, l[:len(l)-len(rest)]+"- "+mk)
				}
			}
		}
		sort.Strings(got)  // the JSON lists calls as they started, the
		sort.Strings(want) // Markdown where they stand in the answer
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("message %d: call lines %q, want %q:\n%s", i, got, want, sec)
		}
		for _, td := range m.Todos {
			box := "- [ ] "
			if td.Status == toolmark.TodoDone {
				box = "- [x] "
			}
			line := box + td.Text
			if td.Status == toolmark.TodoCancelled {
				line += " *(cancelled)*"
			}
			if !strings.Contains(sec, line+"\n") {
				t.Errorf("message %d: plan item %q (%s) missing:\n%s", i, td.Text, td.Status, sec)
			}
		}
	}
	if nested == 0 || failed == 0 || cancelled == 0 {
		t.Errorf("the turns had %d nested, %d failed and %d cancelled calls; want some of each", nested, failed, cancelled)
	}
	if !strings.Contains(sections[3], "Plan (stopped), ") || !strings.Contains(sections[3], "*(Stopped)*") {
		t.Errorf("the stopped answer does not say so:\n%s", sections[3])
	}
}
