package demo

import (
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
)

// attachmentNotes is what the demo model says of the files attached to a
// question (the parts after its text, each headed by
// toolmark.AttachmentHeader): each file's name, type and size, and the
// first line of a text file or of a PDF's text (a PDF goes to the demo as
// its text: toolmark.AcceptsOf). Names and lines are the user's, hostile:
// they are written as Markdown text, every punctuation character escaped.
func attachmentNotes(mc llms.MessageContent) string {
	var b strings.Builder
	for _, p := range mc.Parts[min(1, len(mc.Parts)):] {
		t, ok := p.(llms.TextContent)
		if !ok {
			continue
		}
		u, rest, ok := toolmark.ParseAttachmentHeader(strings.TrimLeft(t.Text, "\n"))
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "- %s (%s, %d bytes)", toolmark.EscapeMarkdown(u.Name), toolmark.EscapeMarkdown(u.MediaType), u.Size)
		line, _, _ := strings.Cut(strings.TrimPrefix(rest, "\n"), "\n")
		if toolmark.Kind(u.MediaType) != toolmark.KindImage && strings.TrimSpace(line) != "" {
			fmt.Fprintf(&b, ", which begins: %s", toolmark.EscapeMarkdown(line))
		}
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		return ""
	}
	return "You attached:\n\n" + b.String() + "\n"
}

// notesOn is attachmentNotes of the conversation's last question.
func notesOn(msgs []llms.MessageContent) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llms.ChatMessageTypeHuman {
			return attachmentNotes(msgs[i])
		}
	}
	return ""
}
