package simplifiedagent

import (
	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
)

// ImageCost and DocumentCost are the shares of the attachment budget an
// image and a PDF sent as a document take, whatever their bytes: a model
// counts an image as a fixed number of tokens (some hundreds to a few
// thousand), a document by its pages.
const (
	ImageCost    = 6 << 10
	DocumentCost = 24 << 10
)

// LeftOutNote follows the header of an earlier question's file that did
// not fit in the attachment budget, in place of its content.
const LeftOutNote = "[this file is left out here: it does not fit in the context; ask to attach it again]"

// fileCost is the share of the attachment budget a file takes: its text's
// bytes, or ImageCost or DocumentCost.
func fileCost(u toolmark.Upload, documents bool) int {
	switch toolmark.Kind(u.MediaType) {
	case toolmark.KindImage:
		return ImageCost
	case toolmark.KindDocument:
		if documents {
			return DocumentCost
		}
		return max(len(u.Text), len(PDFTextNote))
	}
	return int(u.Size)
}

// HistoryFiles chooses which files of the earlier questions (turns'
// Attachments, without their bytes; a PDF's Text read) go to the model
// with the history: within budget bytes ([DefaultAttachmentTextBudget]
// when 0) less what the question's own files (current) take, newest
// question first, each file whole or not at all. It clears what will not
// be sent — the Text of a PDF that goes as a document or not at all — and
// returns the attachments (in turns) whose bytes must be loaded into Data
// (a file without Data or Text is left out: BuildHistory says so by name).
func HistoryFiles(turns []toolmark.HistoryTurn, current []toolmark.Upload, budget int, documents bool) (load []*toolmark.Upload) {
	if budget <= 0 {
		budget = DefaultAttachmentTextBudget
	}
	for _, u := range current {
		budget -= fileCost(u, documents)
	}
	for i := len(turns) - 1; i >= 0; i-- {
		for k := range turns[i].Attachments {
			u := &turns[i].Attachments[k]
			u.Data = nil
			cost := fileCost(*u, documents)
			fits := cost <= budget
			if fits {
				budget -= cost
			}
			asText := toolmark.Kind(u.MediaType) == toolmark.KindDocument && !documents
			switch {
			case asText && fits && u.Text == "":
				u.Text = PDFTextNote
			case !fits || !asText:
				u.Text = ""
			}
			if fits && !asText {
				load = append(load, u)
			}
		}
	}
	return load
}

// historyQuestion is the parts of an earlier question: its text, then each
// file as HistoryFiles left it (its header, then its content, or
// LeftOutNote).
func historyQuestion(t toolmark.HistoryTurn) llms.MessageContent {
	parts := []llms.ContentPart{llms.TextContent{Text: t.UserText}}
	for _, u := range t.Attachments {
		head := "\n\n" + toolmark.AttachmentHeader(u)
		switch {
		case u.Text != "" && toolmark.Kind(u.MediaType) == toolmark.KindDocument:
			parts = append(parts, llms.TextContent{Text: head + "\n" + u.Text})
		case u.Data == nil:
			parts = append(parts, llms.TextContent{Text: head + "\n" + LeftOutNote})
		case toolmark.Kind(u.MediaType) == toolmark.KindText:
			parts = append(parts, llms.TextContent{Text: head + "\n" + string(u.Data)})
		default:
			parts = append(parts, llms.TextContent{Text: head}, llms.BinaryContent{MIMEType: u.MediaType, Data: u.Data})
		}
	}
	return llms.MessageContent{Role: llms.ChatMessageTypeHuman, Parts: parts}
}
