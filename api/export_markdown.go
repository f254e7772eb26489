package api

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// The Markdown export: a heading per message; in an answer, each group of
// tool calls becomes a list where it stood, nested calls (a sub-agent's)
// indented under their parent, each with a mark of its final status and
// its error; the plan with each item's final state; the end of an answer
// that did not complete, with its error; a question asked again says
// which of its versions the export holds. Blocks are separated by exactly
// one blank line.

// maxExportLine bounds a line the export makes of a title, a todo or a
// status (each is at most a few KB already).
const maxExportLine = 4096

// callMarks are the marks of a tool call's status in the export.
var callMarks = map[toolcallmarkup.Status]string{
	toolcallmarkup.StatusSuccess:   "✓",
	toolcallmarkup.StatusError:     "✗",
	toolcallmarkup.StatusCancelled: "⊘",
	toolcallmarkup.StatusRunning:   "…",
	toolcallmarkup.StatusPending:   "…",
}

// todoStates are the words after a plan item that is not simply done or
// to do.
var todoStates = map[toolmark.TodoStatus]string{
	toolmark.TodoInProgress:  " *(in progress)*",
	toolmark.TodoCancelled:   " *(cancelled)*",
	toolmark.TodoInterrupted: " *(interrupted)*",
}

// endedWords say how an answer that did not complete ended.
var endedWords = map[toolmark.MessageStatus]string{
	toolmark.MessageCancelled:   "Stopped",
	toolmark.MessageInterrupted: "Interrupted",
	toolmark.MessageFailed:      "Failed",
}

// exportMarkdown writes a conversation as Markdown.
func exportMarkdown(c toolmark.Conversation, msgs []messageView) string {
	title := c.Title
	if strings.TrimSpace(title) == "" {
		title = "Conversation"
	}
	blocks := []string{"# " + toolcallmarkup.OneLine(title, maxExportLine)}
	for _, m := range msgs {
		who := "You"
		if m.Role == toolmark.RoleAssistant {
			who = "Assistant"
		}
		blocks = append(blocks, fmt.Sprintf("## %s — %s", who, m.CreatedAt.UTC().Format("2006-01-02 15:04 UTC")))
		if m.Role == toolmark.RoleUser {
			if n := len(m.Versions); n > 1 {
				blocks = append(blocks, fmt.Sprintf("*(version %d of %d of this question)*", slices.Index(m.Versions, m.ID)+1, n))
			}
			blocks = append(blocks, strings.TrimSpace(m.Content), attachmentsBlock(m.Attachments))
			continue
		}
		if m.Model != "" {
			blocks[len(blocks)-1] += " · model " + toolcallmarkup.OneLine(m.Model, maxExportLine)
		}
		blocks = append(blocks, answerBlocks(m.Content)...)
		blocks = append(blocks, planBlock(m.Todos, m.Status))
		if w, ok := endedWords[m.Status]; ok {
			end := "*(" + w + ")*"
			if m.Error != "" {
				end = "*(" + w + ": " + toolcallmarkup.OneLine(m.Error, maxExportLine) + ")*"
			}
			blocks = append(blocks, end)
		}
	}
	var b strings.Builder
	for _, bl := range blocks {
		if bl = strings.TrimSpace(bl); bl != "" {
			b.WriteString(bl + "\n\n")
		}
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// answerBlocks splits an answer's content into its text and, where each
// group of top-level ToolCall elements stood, the list of those calls.
func answerBlocks(content string) []string {
	spans := toolcallmarkup.Scan(content)
	depth := make([]int, len(spans))
	var blocks []string
	var list strings.Builder
	flush := func() {
		if list.Len() > 0 {
			blocks = append(blocks, list.String())
			list.Reset()
		}
	}
	last := 0
	for i, sp := range spans {
		if sp.Parent >= 0 {
			depth[i] = depth[sp.Parent] + 1
		} else {
			if text := toolcallmarkup.RestoreText(content[last:sp.Start]); strings.TrimSpace(text) != "" {
				flush()
				blocks = append(blocks, tidyText(text))
			}
			last = sp.End
		}
		list.WriteString(callLine(sp.Call, depth[i]))
	}
	flush()
	blocks = append(blocks, tidyText(toolcallmarkup.RestoreText(content[last:])))
	return blocks
}

// callLine is one call's list item: its status mark, its status text and
// its error.
func callLine(tc toolcallmarkup.ToolCall, depth int) string {
	mark, ok := callMarks[tc.Status]
	if !ok {
		mark = "…"
	}
	line := toolcallmarkup.OneLine(statustext.Text(tc), maxExportLine)
	if tc.Error != "" {
		if e := toolcallmarkup.OneLine(tc.Error, maxExportLine); !strings.Contains(line, e) {
			line += " — " + e
		}
	}
	return strings.Repeat("  ", depth) + "- " + mark + " " + line + "\n"
}

// planBlock is an answer's plan with each item's final state, headed by
// how far it got (and, for an answer that did not complete, how it ended).
func planBlock(todos []toolmark.Todo, status toolmark.MessageStatus) string {
	if len(todos) == 0 {
		return ""
	}
	done := 0
	var items strings.Builder
	for _, t := range todos {
		mark := " "
		if t.Status == toolmark.TodoDone {
			mark = "x"
			done++
		}
		fmt.Fprintf(&items, "- [%s] %s%s\n", mark, toolcallmarkup.OneLine(t.Text, maxExportLine), todoStates[t.Status])
	}
	head := fmt.Sprintf("Plan, %d of %d done:", done, len(todos))
	if w, ok := endedWords[status]; ok {
		head = fmt.Sprintf("Plan (%s), %d of %d done:", strings.ToLower(w), done, len(todos))
	}
	return head + "\n\n" + items.String()
}

// tidyText trims a stretch of answer text and collapses runs of blank
// lines outside code fences to one.
func tidyText(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	out := lines[:0]
	fence, blank := false, false
	for _, l := range lines {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = !fence
		}
		isBlank := strings.TrimSpace(l) == ""
		if isBlank && blank && !fence {
			continue
		}
		blank = isBlank
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// attachmentsBlock lists a question's files: each a link to it, with its
// type and size (the name is the user's: escaped Markdown text).
func attachmentsBlock(ups []toolmark.Upload) string {
	var b strings.Builder
	for _, u := range ups {
		fmt.Fprintf(&b, "- 📎 [%s](%s) (%s, %d bytes)\n", toolmark.EscapeMarkdown(u.Name), u.URL, u.MediaType, u.Size)
	}
	return b.String()
}
