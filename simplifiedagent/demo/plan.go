package demo

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/tmc/langchaingo/llms"
)

// How the demo chooses its tool calls: the first round's plan from the parts
// and keywords of the question, and in later rounds broader retries of
// empty searches and the task list marked done.

var urlRE = regexp.MustCompile(`https?://[^\s<>"')\]]+`)

// plan chooses the first round's tool calls.
func plan(question string, offered map[string]bool, salt int) []llms.ToolCall {
	var calls []llms.ToolCall
	add := func(name string, args any) {
		b, _ := json.Marshal(args)
		calls = append(calls, newCall(salt, len(calls), name, string(b)))
	}
	parts := Parts(question)
	lower := strings.ToLower(question)
	research := strings.Contains(lower, "research") || strings.Contains(lower, "compare")
	planned := (len(parts) > 1 || strings.Contains(lower, "plan")) && offered["todo_list"]
	if planned {
		// Sub-agents work on their steps at once, each ticking its own
		// when it ends; searches go one step after the other.
		var todos []map[string]any
		for i, p := range parts {
			st := "pending"
			if i == 0 || research && offered["subagent"] {
				st = "in_progress"
			}
			todos = append(todos, map[string]any{"text": capitalize(p), "status": st})
		}
		todos = append(todos, map[string]any{"text": WriteStep, "status": "pending"})
		add("todo_list", map[string]any{"todos": todos})
	}
	for _, u := range urlRE.FindAllString(question, 2) {
		if offered["fetch_url"] {
			add("fetch_url", map[string]any{"url": strings.TrimRight(u, ".,;:!?")})
		}
	}
	for _, p := range parts {
		switch {
		case research && offered["subagent"]:
			// The task first: it is what a client shows while the
			// arguments stream.
			args := struct {
				Task string `json:"task"`
				Step string `json:"step,omitempty"`
			}{Task: Task(p)}
			if planned {
				args.Step = capitalize(p)
			}
			add("subagent", args)
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

// WriteStep is the last item of the demo's plans, ticked once the answer
// is written.
const WriteStep = "Write the answer"

// planNext returns the plan the demo sends once its tools have run: every
// step done but the last, "Write the answer", in progress — before it
// writes (written false) — or that one done too, with the answer
// (written true). It returns nil when the plan already says so.
func planNext(todos []map[string]any, written bool) []map[string]any {
	next := make([]map[string]any, len(todos))
	changed := false
	for i, t := range todos {
		st := "done"
		if i == len(todos)-1 && !written {
			st = "in_progress"
		}
		changed = changed || t["status"] != st
		next[i] = map[string]any{"text": t["text"], "status": st}
	}
	if !changed {
		return nil
	}
	return next
}

func allDone(todos []map[string]any) bool {
	for _, t := range todos {
		if t["status"] != "done" {
			return false
		}
	}
	return true
}
