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
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark/simplifiedagent/llmstream"
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
		} else if todos := lastTodos(results); offered["todo_list"] && len(todos) > 0 && !allDone(todos) {
			for i := range todos {
				todos[i]["status"] = "done"
			}
			args, _ := json.Marshal(map[string]any{"todos": todos})
			return m.toolCalls(ctx, []llms.ToolCall{newCall(len(messages), 0, "todo_list", string(args))})
		}
	}
	answer := m.sized(compose(question, results))
	if prior := partialAnswer(messages); prior != "" {
		// An answer begun on another server and handed over: go on
		// where it stopped, as a model continuing its own message does.
		answer = continueAfter(answer, prior)
	}
	return m.text(ctx, &opts, answer)
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
			qs = append(qs, oneLine(q, 160))
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

var urlRE = regexp.MustCompile(`https?://[^\s<>"')\]]+`)

// plan chooses the first round's tool calls.
func plan(question string, offered map[string]bool, salt int) []llms.ToolCall {
	var calls []llms.ToolCall
	add := func(name string, args map[string]any) {
		b, _ := json.Marshal(args)
		calls = append(calls, newCall(salt, len(calls), name, string(b)))
	}
	parts := Parts(question)
	lower := strings.ToLower(question)
	if (len(parts) > 1 || strings.Contains(lower, "plan")) && offered["todo_list"] {
		var todos []map[string]any
		for i, p := range parts {
			st := "pending"
			if i == 0 {
				st = "in_progress"
			}
			todos = append(todos, map[string]any{"text": capitalize(p), "status": st})
		}
		todos = append(todos, map[string]any{"text": "Write the answer", "status": "pending"})
		add("todo_list", map[string]any{"todos": todos})
	}
	for _, u := range urlRE.FindAllString(question, 2) {
		if offered["fetch_url"] {
			add("fetch_url", map[string]any{"url": strings.TrimRight(u, ".,;:!?")})
		}
	}
	research := strings.Contains(lower, "research") || strings.Contains(lower, "compare")
	for _, p := range parts {
		switch {
		case research && offered["subagent"]:
			add("subagent", map[string]any{"task": Task(p)})
		case offered["search_documents"]:
			if q := Keywords(p); q != "" {
				add("search_documents", map[string]any{"query": q})
			}
		case offered["web_search"]:
			if q := Keywords(p); q != "" {
				add("web_search", map[string]any{"query": q})
			}
		}
	}
	return calls
}

func newCall(salt, i int, name, args string) llms.ToolCall {
	return llms.ToolCall{ID: fmt.Sprintf("call_demo_%d_%d", salt, i), Type: "function",
		FunctionCall: &llms.FunctionCall{Name: name, Arguments: args}}
}

// Task returns the sub-agent task of a part of a question: "Research how
// crash recovery works" becomes "Look up how crash recovery works".
func Task(part string) string {
	p := strings.TrimSpace(part)
	for _, verb := range []string{"research", "compare", "look up", "find out"} {
		if len(p) > len(verb) && strings.EqualFold(p[:len(verb)], verb) && p[len(verb)] == ' ' {
			p = strings.TrimSpace(p[len(verb):])
			break
		}
	}
	return "Look up " + p
}

var splitRE = regexp.MustCompile(`\?\s*|;\s*|\n+\s*(?:[-*]|\d+[.)])?\s*`)

// Parts splits a question into its parts: sentences ending in "?", items
// of a list, clauses separated by ";", or the two sides of "compare A and
// B" / "A vs B". A simple question is one part.
func Parts(q string) []string {
	var parts []string
	for _, p := range splitRE.Split(q, -1) {
		p = strings.TrimSpace(strings.Trim(strings.TrimSpace(p), ".:!"))
		if len(Keywords(p)) > 0 {
			parts = append(parts, p)
		}
	}
	if len(parts) == 1 {
		p := parts[0]
		lower := strings.ToLower(p)
		for _, sep := range []string{" vs. ", " vs ", " versus ", " and "} {
			i := strings.Index(lower, sep)
			if i < 0 || (sep == " and " && !strings.HasPrefix(lower, "compare") && len(strings.Fields(p)) < 8) {
				continue
			}
			a, b := strings.TrimSpace(p[:i]), strings.TrimSpace(p[i+len(sep):])
			if len(a) > len("compare ") && strings.EqualFold(a[:len("compare ")], "compare ") {
				a = strings.TrimSpace(a[len("compare "):])
			}
			if Keywords(a) != "" && Keywords(b) != "" {
				return []string{a, b}
			}
		}
	}
	if len(parts) > 5 {
		parts = parts[:5]
	}
	return parts
}

var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or but if of to in on at by for with from into about as is are was were be been
	being do does did doing how what when where which who whom why can could should would will shall may might must i you
	we they he she it me my our your their this that these those there here please tell explain describe show give find
	about some any all more most much many does toolmark's also then than so not no yes vs versus compare research
	between both each other own same such only just very happens happen work works use used using get gets
	documentation docs says say make plan step steps briefly short summary summarise summarize answer look up
	find out example examples see read fetch page url open visit`) {
		stopwords[w] = true
	}
}

// Keywords returns the search words of a question: lower case, without
// punctuation and stop words, at most six.
func Keywords(s string) string {
	s = urlRE.ReplaceAllString(s, " ")
	var out []string
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_'
	})
	seen := map[string]bool{}
	for _, w := range words {
		w = strings.Trim(w, "-_")
		if len(w) < 2 || stopwords[w] || seen[w] || strings.HasPrefix(w, "http") {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if len(out) == 6 {
			break
		}
	}
	return strings.Join(out, " ")
}

// retries returns broader queries for the searches of the first round
// that found nothing: the full-text search wants every word, so the retry
// asks for any of them.
func retries(results []toolResult, offered map[string]bool) []string {
	if !offered["search_documents"] {
		return nil
	}
	var out []string
	for _, r := range results {
		q, _ := r.args["query"].(string)
		if r.name == "search_documents" && strings.HasPrefix(r.content, "Found 0 ") &&
			strings.Contains(q, " ") && !strings.Contains(q, " or ") {
			out = append(out, strings.Join(strings.Fields(q), " or "))
		}
	}
	return out
}

func lastTodos(results []toolResult) []map[string]any {
	for i := len(results) - 1; i >= 0; i-- {
		if results[i].name == "todo_list" && !strings.HasPrefix(results[i].content, "error:") {
			if ts, ok := results[i].args["todos"].([]any); ok {
				var out []map[string]any
				for _, t := range ts {
					if m, ok := t.(map[string]any); ok {
						out = append(out, m)
					}
				}
				return out
			}
		}
	}
	return nil
}

func allDone(todos []map[string]any) bool {
	for _, t := range todos {
		if t["status"] != "done" {
			return false
		}
	}
	return true
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return toolcallmarkup.Truncate(s, n) + "…"
}

func (m *Model) pause(ctx context.Context) error {
	if m.Delay <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(m.Delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// toolCalls streams calls' arguments and returns them.
func (m *Model) toolCalls(ctx context.Context, calls []llms.ToolCall) (*llms.ContentResponse, error) {
	fn := llmstream.ToolCallDeltaFuncFromContext(ctx)
	size := m.ChunkBytes
	if size <= 0 {
		size = 6
	}
	for i, c := range calls {
		if fn == nil {
			break
		}
		if err := m.pause(ctx); err != nil {
			return nil, err
		}
		if err := fn(ctx, llmstream.ToolCallDelta{Index: i, ID: c.ID, Name: c.FunctionCall.Name}); err != nil {
			return nil, err
		}
		for _, chunk := range chunks(c.FunctionCall.Arguments, size) {
			if err := m.pause(ctx); err != nil {
				return nil, err
			}
			if err := fn(ctx, llmstream.ToolCallDelta{Index: i, Arguments: chunk}); err != nil {
				return nil, err
			}
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{StopReason: "tool_calls", ToolCalls: calls}}}, nil
}

// text streams s a few words at a time.
func (m *Model) text(ctx context.Context, opts *llms.CallOptions, s string) (*llms.ContentResponse, error) {
	if opts.StreamingFunc != nil {
		for _, w := range words(s) {
			if err := m.pause(ctx); err != nil {
				return nil, err
			}
			if err := opts.StreamingFunc(ctx, []byte(w)); err != nil {
				return nil, err
			}
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: s, StopReason: "stop"}}}, nil
}

// chunks cuts s into pieces of about n bytes on rune boundaries.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		k := min(n, len(s))
		for k < len(s) && s[k]&0xC0 == 0x80 {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

// words cuts s into pieces of three words with their trailing space.
func words(s string) []string {
	var out []string
	count := 0
	start := 0
	for i, r := range s {
		if r == ' ' || r == '\n' {
			count++
			if count == 3 {
				out = append(out, s[start:i+1])
				start, count = i+1, 0
			}
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
