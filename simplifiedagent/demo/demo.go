// Package demo is toolmark's offline demo model: an llms.Model that needs
// no network and no API key, yet really uses the tools.
//
// It plans tool calls from the question — todo_list for a question with
// several parts, search_documents with keywords of each part, fetch_url for
// a URL, subagent for "research" and "compare" questions — streams their
// arguments in small chunks, and in a later round writes an answer built
// from the tool results it finds in the conversation, citing the documents
// it found. Every answer starts with Banner so nobody mistakes it for a
// language model. It is deterministic; Delay sets the streaming pace.
package demo

import (
	"context"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark/toolcallmarkup"
)

// Banner starts every answer of the demo model.
const Banner = "*(offline demo model: no language model is configured, so this answer is assembled from the tool results)*"

// Model is the demo model.
type Model struct {
	// Delay is the pause before each streamed chunk; 0 streams at once.
	Delay time.Duration
	// ChunkBytes is the size of streamed argument chunks; default 6.
	ChunkBytes int
	// Config holds the load knobs (tools per turn, answer length).
	Config
}

var _ llms.Model = (*Model)(nil)

// New returns the demo model at its default pace (20 ms per chunk).
func New() *Model { return &Model{Delay: 20 * time.Millisecond, ChunkBytes: 6} }

// Call implements llms.Model.
func (m *Model) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// toolResult is one tool response found in the conversation.
type toolResult struct {
	name    string
	args    map[string]any
	content string
}

// GenerateContent implements llms.Model.
func (m *Model) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	resp, err := m.generate(ctx, messages, options...)
	if err != nil || resp == nil {
		return resp, err
	}
	// A demo has no tokenizer: about four bytes a token, as services count
	// English text, so that usage shows in the page as with a real model.
	in, out := 0, 0
	for _, mc := range messages {
		in += len(textOf(mc))
		for _, p := range mc.Parts {
			if r, ok := p.(llms.ToolCallResponse); ok {
				in += len(r.Content)
			}
		}
	}
	for _, ch := range resp.Choices {
		out += len(ch.Content)
		for _, c := range ch.ToolCalls {
			out += len(c.FunctionCall.Arguments) + len(c.FunctionCall.Name)
		}
		ch.GenerationInfo = map[string]any{"InputTokens": in/4 + 1, "OutputTokens": out/4 + 1}
	}
	return resp, nil
}

func (m *Model) generate(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	opts := llms.CallOptions{}
	for _, o := range options {
		o(&opts)
	}
	offered := map[string]bool{}
	for _, t := range opts.Tools {
		if t.Function != nil {
			offered[t.Function.Name] = true
		}
	}
	question, results, rounds := readConversation(messages)
	var plan []map[string]any // the plan sent after the answer, if any
	if strings.HasPrefix(question, summaryInstruction) {
		return m.text(ctx, &opts, summarise(question))
	}
	if len(offered) > 0 {
		if rounds == 0 {
			if calls := m.planned(question, offered, len(messages)); len(calls) > 0 {
				return m.toolCalls(ctx, calls)
			}
		} else if retry := retries(results, offered); len(retry) > 0 && rounds == 1 {
			var calls []llms.ToolCall
			for i, q := range retry {
				args, _ := json.Marshal(map[string]any{"query": q})
				calls = append(calls, newCall(len(messages), i, "search_documents", string(args)))
			}
			return m.toolCalls(ctx, calls)
		} else if todos := lastTodos(results); offered["todo_list"] && len(todos) > 0 {
			if allDone(todos) {
				// The plan was ticked with the answer: nothing more to say.
				return m.text(ctx, &opts, "")
			}
			if next := planNext(todos, false); next != nil {
				return m.toolCalls(ctx, []llms.ToolCall{todoCall(len(messages), next)})
			}
			// Writing: the answer, then its step ticked.
			plan = planNext(todos, true)
		}
	}
	var answer string
	if len(explicitCalls(question, offered, 0)) > 0 {
		answer = m.sized(composeResults(question, results)) // the question named its calls
	} else {
		answer = m.sized(compose(question, results))
	}
	answer = notesOn(messages) + answer
	if prior := partialAnswer(messages); prior != "" {
		// An answer begun on another server and handed over: go on
		// where it stopped, as a model continuing its own message does.
		answer = continueAfter(answer, prior)
	}
	if plan != nil {
		return m.textThenCalls(ctx, &opts, answer, []llms.ToolCall{todoCall(len(messages), plan)})
	}
	return m.text(ctx, &opts, answer)
}

// todoCall is a todo_list call sending todos.
func todoCall(salt int, todos []map[string]any) llms.ToolCall {
	args, _ := json.Marshal(map[string]any{"todos": todos})
	return newCall(salt, 0, "todo_list", string(args))
}

// partialAnswer returns the text of a conversation's last message when it
// is the model's own unfinished answer (a turn continued after a hand-over:
// the loop never asks the model again after a reply of plain text).
func partialAnswer(msgs []llms.MessageContent) string {
	if len(msgs) == 0 {
		return ""
	}
	last := msgs[len(msgs)-1]
	if last.Role != llms.ChatMessageTypeAI {
		return ""
	}
	for _, p := range last.Parts {
		if _, ok := p.(llms.ToolCall); ok {
			return ""
		}
	}
	return textOf(last)
}

// continueAfter returns what answer has left to say after prior, the part
// of it already written.
func continueAfter(answer, prior string) string {
	prior = strings.TrimLeft(prior, " \n")
	for _, p := range []string{prior, strings.TrimRight(prior, " \n")} {
		if i := strings.Index(answer, p); i >= 0 && p != "" {
			return answer[i+len(p):]
		}
	}
	// The text read back may differ in layout: match its last words.
	tail := prior
	for len(tail) > 40 {
		_, size := utf8.DecodeRuneInString(tail)
		tail = tail[size:]
	}
	if i := strings.LastIndex(answer, tail); i >= 0 && tail != "" {
		return answer[i+len(tail):]
	}
	return answer
}

// summaryInstruction starts simplifiedagent.Compact's request.
const summaryInstruction = "Summarise the conversation below"

// summarise answers a compaction request with the user's questions.
func summarise(prompt string) string {
	var qs []string
	for _, line := range strings.Split(prompt, "\n") {
		if q, ok := strings.CutPrefix(line, "User: "); ok {
			qs = append(qs, toolcallmarkup.OneLine(q, 160))
		}
	}
	if len(qs) == 0 {
		return "Nothing to summarise."
	}
	return "Earlier the user asked: " + strings.Join(qs, "; ") + "."
}

// readConversation returns the last human message, the tool results after
// it and the number of model replies after it.
func readConversation(msgs []llms.MessageContent) (string, []toolResult, int) {
	start := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llms.ChatMessageTypeHuman {
			start = i
			break
		}
	}
	if start < 0 {
		return "", nil, 0
	}
	question := textOf(msgs[start])
	if len(msgs[start].Parts) > 1 { // a question with attachments: its text first
		question = textOf(llms.MessageContent{Parts: msgs[start].Parts[:1]})
	}
	calls := map[string]llms.ToolCall{}
	var results []toolResult
	rounds := 0
	for _, mc := range msgs[start+1:] {
		if mc.Role == llms.ChatMessageTypeAI {
			rounds++
		}
		for _, p := range mc.Parts {
			switch p := p.(type) {
			case llms.ToolCall:
				calls[p.ID] = p
			case llms.ToolCallResponse:
				r := toolResult{name: p.Name, content: p.Content}
				if c, ok := calls[p.ToolCallID]; ok && c.FunctionCall != nil {
					r.name = c.FunctionCall.Name
					_ = json.Unmarshal([]byte(c.FunctionCall.Arguments), &r.args)
				}
				results = append(results, r)
			}
		}
	}
	return question, results, rounds
}

func textOf(mc llms.MessageContent) string {
	var b strings.Builder
	for _, p := range mc.Parts {
		if t, ok := p.(llms.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}
