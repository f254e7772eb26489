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
// then for each file a header line (toolmark.AttachmentHeader) and its
// content: an image, and a PDF when documents is set (the model takes
// them), as an llms.BinaryContent (each provider's own format); a text
// file, and a PDF when documents is not set (its text, Upload.Text), as
// text, all of them together within budget bytes (the last one cut with
// AttachmentCut, the ones after it left out with their headers only).
func UserParts(text string, ups []toolmark.Upload, budget int, documents bool) []llms.ContentPart {
	parts := []llms.ContentPart{llms.TextContent{Text: text}}
	for _, u := range ups {
		head := "\n\n" + toolmark.AttachmentHeader(u)
		body, asText := fileText(u, documents)
		if !asText {
			parts = append(parts, llms.TextContent{Text: head}, llms.BinaryContent{MIMEType: u.MediaType, Data: u.Data})
			continue
		}
		n := len(body)
		if n > budget {
			body = cutUTF8(body, budget) + AttachmentCut
		}
		budget = max(0, budget-n)
		parts = append(parts, llms.TextContent{Text: head + "\n" + body})
	}
	return parts
}

// PDFTextNote stands for the text of a PDF from which none was read.
const PDFTextNote = "[no text could be read from this PDF]"

// fileText returns the text a model gets of a file, and whether it gets
// text: a text file's content, a PDF's text when the model takes no
// documents.
func fileText(u toolmark.Upload, documents bool) (string, bool) {
	switch toolmark.Kind(u.MediaType) {
	case toolmark.KindImage:
		return "", false
	case toolmark.KindDocument:
		if documents {
			return "", false
		}
		if u.Text == "" {
			return PDFTextNote, true
		}
		return u.Text, true
	}
	return string(u.Data), true
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
