package simplifiedagent

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent/llmstream"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// SummaryPrefix starts the system message that carries the summary of
// compacted turns.
const SummaryPrefix = "Summary of the earlier conversation:\n"

// BuildHistory turns a conversation's summary and earlier turns into
// messages for the model: for each turn the user's message (with its files
// as HistoryFiles left them), an AI message
// with the turn's reasoning items (see llmstream.ReasoningPart; each model
// sends back those its API wants) and the top-level tool calls (from the
// records: name, arguments), a tool message with each call's result (or
// "error: …"), and an AI message with the visible answer text. ToolCall markup never reaches the model: the
// answer text is the content with its ToolCall elements removed.
func BuildHistory(summary string, turns []toolmark.HistoryTurn) []llms.MessageContent {
	var msgs []llms.MessageContent
	if s := strings.TrimSpace(summary); s != "" {
		msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeSystem, "\n\n"+SummaryPrefix+s))
	}
	for _, t := range turns {
		msgs = append(msgs, historyQuestion(t))
		var calls, responses []llms.ContentPart
		for _, r := range t.ToolCalls {
			if r.ParentID != "" || r.ID == "" {
				continue
			}
			args := strings.TrimSpace(string(r.Arguments))
			if args == "" {
				args = "{}"
			}
			calls = append(calls, llms.ToolCall{ID: r.ID, Type: "function",
				FunctionCall: &llms.FunctionCall{Name: r.Name, Arguments: args}})
			responses = append(responses, llms.ToolCallResponse{ToolCallID: r.ID, Name: r.Name, Content: recordResult(r)})
		}
		var reasoning []llms.ContentPart
		for _, p := range t.Reasoning {
			reasoning = append(reasoning, llmstream.Part(p))
		}
		if len(calls) > 0 {
			msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: append(reasoning, calls...)})
			reasoning = nil
			for _, p := range responses {
				msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{p}})
			}
		}
		if text := VisibleText(t.AssistantContent); text != "" {
			msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: append(reasoning, llms.TextContent{Text: text})})
		}
	}
	return msgs
}

func recordResult(r toolmark.ToolCallRecord) string {
	switch toolcallmarkup.Status(r.Status) {
	case toolcallmarkup.StatusSuccess:
		return r.Result
	case toolcallmarkup.StatusError, toolcallmarkup.StatusCancelled:
		if r.Error != "" {
			return "error: " + r.Error
		}
		return "error: " + r.Status
	}
	return "error: interrupted"
}

var blankLines = regexp.MustCompile(`\n{3,}`)

// VisibleText returns the text of a markup content without its ToolCall
// elements, neutralised text restored to what the model wrote.
func VisibleText(content string) string { return strings.TrimSpace(visibleText(content)) }

// visibleText is VisibleText with the white space at its ends kept.
func visibleText(content string) string {
	return blankLines.ReplaceAllString(toolcallmarkup.Text(content), "\n\n")
}

// HistoryChars returns the size of a summary and turns in characters
// (bytes), as Compact measures it against its budget.
func HistoryChars(summary string, turns []toolmark.HistoryTurn) int {
	n := len(summary)
	for _, t := range turns {
		n += turnChars(t)
	}
	return n
}

func turnChars(t toolmark.HistoryTurn) int {
	n := len(t.UserText) + len(VisibleText(t.AssistantContent))
	for _, r := range t.ToolCalls {
		if r.ParentID == "" {
			n += len(r.Arguments) + len(recordResult(r))
		}
	}
	return n
}

// Compact keeps the history within budgetChars. When summary and turns are
// larger, it folds the oldest turns (keeping at least the newest) into a
// new summary until what is kept takes at most half the budget, and
// returns the new summary and the turns to keep. The summary is written by
// model; with a nil model it is a plain extract of the turns. Call it after
// a turn completes, never during one. On error the input is returned
// unchanged with the error.
func Compact(ctx context.Context, model llms.Model, summary string, turns []toolmark.HistoryTurn, budgetChars int) (string, []toolmark.HistoryTurn, error) {
	if budgetChars <= 0 || HistoryChars(summary, turns) <= budgetChars || len(turns) < 2 {
		return summary, turns, nil
	}
	keepFrom := len(turns) - 1
	size := turnChars(turns[keepFrom])
	for keepFrom > 1 && size+turnChars(turns[keepFrom-1]) <= budgetChars/2 {
		keepFrom--
		size += turnChars(turns[keepFrom])
	}
	old := turns[:keepFrom]
	maxSummary := max(budgetChars/4, 200)
	var newSummary string
	if model == nil {
		newSummary = extract(summary, old, maxSummary)
	} else {
		resp, err := model.GenerateContent(ctx, []llms.MessageContent{
			llms.TextParts(llms.ChatMessageTypeHuman, summaryPrompt(summary, old, maxSummary)),
		})
		if err != nil {
			return summary, turns, fmt.Errorf("compacting history: %w", err)
		}
		if len(resp.Choices) == 0 || strings.TrimSpace(resp.Choices[0].Content) == "" {
			return summary, turns, errors.New("compacting history: the model wrote no summary")
		}
		newSummary = strings.TrimSpace(resp.Choices[0].Content)
	}
	if len(newSummary) > maxSummary {
		newSummary = truncate(newSummary, maxSummary)
	}
	return newSummary, append([]toolmark.HistoryTurn(nil), turns[keepFrom:]...), nil
}

// SummaryInstruction starts the prompt with which Compact asks a model for
// a summary.
const SummaryInstruction = "Summarise the conversation below for your own later use"

func summaryPrompt(summary string, turns []toolmark.HistoryTurn, maxChars int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, in at most %d characters. Keep facts, decisions, names, numbers, sources "+
		"and open questions; drop pleasantries.\n\n", SummaryInstruction, maxChars)
	if summary != "" {
		fmt.Fprintf(&b, "Summary so far:\n%s\n\n", summary)
	}
	b.WriteString("Conversation:\n")
	writeTurns(&b, turns, 4000)
	return b.String()
}

func writeTurns(b *strings.Builder, turns []toolmark.HistoryTurn, perPart int) {
	for _, t := range turns {
		fmt.Fprintf(b, "User: %s\n", truncate(t.UserText, perPart))
		for _, r := range t.ToolCalls {
			if r.ParentID == "" && r.Name != "todo_list" {
				fmt.Fprintf(b, "Tool %s(%s): %s\n", r.Name, truncate(string(r.Arguments), 300), truncate(recordResult(r), 300))
			}
		}
		fmt.Fprintf(b, "Assistant: %s\n\n", truncate(VisibleText(t.AssistantContent), perPart))
	}
}

// extract is the summary without a model: the earlier summary and the
// beginning of each turn.
func extract(summary string, turns []toolmark.HistoryTurn, maxChars int) string {
	var b strings.Builder
	if summary != "" {
		b.WriteString(summary + "\n")
	}
	for _, t := range turns {
		fmt.Fprintf(&b, "- User asked: %s; answer: %s\n", toolcallmarkup.OneLine(t.UserText, 200), toolcallmarkup.OneLine(VisibleText(t.AssistantContent), 300))
	}
	s := b.String()
	if len(s) > maxChars {
		// Keep the newest part.
		s = s[len(s)-maxChars:]
		for len(s) > 0 && s[0]&0xC0 == 0x80 {
			s = s[1:]
		}
	}
	return strings.TrimSpace(s)
}
