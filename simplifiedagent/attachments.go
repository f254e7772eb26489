package simplifiedagent

import (
	"unicode/utf8"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
)

// DefaultAttachmentTextBudget is how many bytes of text files a turn's
// question carries in all, when Request.AttachmentTextBudget is 0.
const DefaultAttachmentTextBudget = 100 << 10

// AttachmentCut ends a text file cut to the budget.
const AttachmentCut = "\n[… the rest of the file is cut]"

// UserParts is the parts of a question with its attachments: the text,
// then for each file a header line (toolmark.AttachmentHeader) and its content: an
// image or a PDF as an llms.BinaryContent (each provider's own format),
// a text file as text, all text files together within budget bytes (the
// last one cut with AttachmentCut, the ones after it left out with their
// headers only).
func UserParts(text string, ups []toolmark.Upload, budget int) []llms.ContentPart {
	parts := []llms.ContentPart{llms.TextContent{Text: text}}
	for _, u := range ups {
		head := "\n\n" + toolmark.AttachmentHeader(u)
		if toolmark.Kind(u.MediaType) != toolmark.KindText {
			parts = append(parts, llms.TextContent{Text: head}, llms.BinaryContent{MIMEType: u.MediaType, Data: u.Data})
			continue
		}
		body := string(u.Data)
		if len(body) > budget {
			body = cutUTF8(body, budget) + AttachmentCut
		}
		budget = max(0, budget-len(u.Data))
		parts = append(parts, llms.TextContent{Text: head + "\n" + body})
	}
	return parts
}

// cutUTF8 cuts s to at most n bytes on a rune boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
