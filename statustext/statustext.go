// Package statustext writes the one-line status a tool call shows — in a
// rendered widget, in the web page's status bubble and in the terminal
// client — from its tag: `Searching knowledge base for "go generics"…`,
// `Found 3 results for "go generics"`. The server writes it once into every
// tool_call_* event (ToolCallData.StatusText), so no client keeps a copy of
// these rules.
//
// It imports only the standard library and toolcallmarkup.
package statustext

import (
	"strconv"
	"unicode/utf8"

	"github.com/toolmark/toolmark/toolcallmarkup"
)

// Func returns the plain-text line a widget shows for tc, e.g.
// `Searching knowledge base for "go generics"…`. Whoever shows it escapes
// it.
type Func func(tc toolcallmarkup.ToolCall) string

// DisplayLimit is how many characters (runes) of a query, URL, task or tool
// name a default status text shows before cutting it with "…".
const DisplayLimit = 60

// ErrorLimit is how many bytes of a tool's error text a widget shows.
const ErrorLimit = 300

// Attr returns the value of tc's tool-specific attribute key, or "".
func Attr(tc toolcallmarkup.ToolCall, key string) string {
	for _, a := range tc.Attrs {
		if a.Key == key {
			return a.Value
		}
	}
	return ""
}

// Truncate cuts s to at most n runes, ending it with "…" when it was cut.
func Truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for j := range s {
		if count == n-1 {
			i = j
			break
		}
		count++
	}
	return s[:i] + "…"
}

// TruncateBytes cuts s to at most n bytes on a rune boundary, ending it with
// "…" when it was cut.
func TruncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ell = "…"
	return toolcallmarkup.Truncate(s, max(n-len(ell), 0)) + ell
}

// Text returns the status text of tc: the built-in text of its tool type,
// or Generic for a type without one.
func Text(tc toolcallmarkup.ToolCall) string {
	if f, ok := defaults[tc.Type]; ok {
		return f(tc)
	}
	return Generic(tc)
}

var defaults = Defaults()

// Defaults returns the built-in status texts per tool type:
// search_documents, web_search, fetch_url, subagent and todo_list.
func Defaults() map[string]Func {
	return map[string]Func{
		"search_documents": searchText("Searching knowledge base", "Searched knowledge base", "results", "Search"),
		"web_search":       searchText("Searching the web", "Searched the web", "web results", "Web search"),
		"fetch_url":        fetchText,
		"subagent":         subagentText,
		"todo_list":        todoText,
	}
}

func quoted(s string) string { return `"` + Truncate(s, DisplayLimit) + `"` }

func searchText(running, done, results, noun string) Func {
	return func(tc toolcallmarkup.ToolCall) string {
		q := Attr(tc, "query")
		switch Normalize(tc.Status) {
		case toolcallmarkup.StatusPending:
			return "Preparing " + lowerFirst(noun) + "…"
		case toolcallmarkup.StatusRunning:
			if q == "" {
				return running + "…"
			}
			return running + " for " + quoted(q) + "…"
		case toolcallmarkup.StatusSuccess:
			n, err := strconv.Atoi(Attr(tc, "count"))
			if err != nil || n < 0 {
				if q == "" {
					return done
				}
				return done + " for " + quoted(q)
			}
			word := results
			if n == 1 {
				word = results[:len(results)-1]
			}
			s := "Found " + strconv.Itoa(n) + " " + word
			if q != "" {
				s += " for " + quoted(q)
			}
			return s
		case toolcallmarkup.StatusError:
			return noun + " failed"
		default:
			return noun + " cancelled"
		}
	}
}

func lowerFirst(s string) string {
	if s != "" && s[0] >= 'A' && s[0] <= 'Z' {
		return string(s[0]+'a'-'A') + s[1:]
	}
	return s
}

func fetchText(tc toolcallmarkup.ToolCall) string {
	u := Truncate(Attr(tc, "url"), DisplayLimit)
	switch Normalize(tc.Status) {
	case toolcallmarkup.StatusPending:
		return "Preparing to fetch a page…"
	case toolcallmarkup.StatusRunning:
		if u == "" {
			return "Fetching a page…"
		}
		return "Fetching " + u + "…"
	case toolcallmarkup.StatusSuccess:
		if u == "" {
			return "Fetched a page"
		}
		return "Fetched " + u
	case toolcallmarkup.StatusError:
		if u == "" {
			return "Fetch failed"
		}
		return "Could not fetch " + u
	default:
		return "Fetch cancelled"
	}
}

func subagentText(tc toolcallmarkup.ToolCall) string {
	task := Attr(tc, "task")
	switch Normalize(tc.Status) {
	case toolcallmarkup.StatusPending:
		return "Starting a sub-agent…"
	case toolcallmarkup.StatusRunning:
		if task == "" {
			return "Sub-agent working…"
		}
		return "Sub-agent working on " + quoted(task) + "…"
	case toolcallmarkup.StatusSuccess:
		if task == "" {
			return "Sub-agent finished"
		}
		return "Sub-agent finished " + quoted(task)
	case toolcallmarkup.StatusError:
		return "Sub-agent failed"
	default:
		return "Sub-agent cancelled"
	}
}

func todoText(tc toolcallmarkup.ToolCall) string {
	switch Normalize(tc.Status) {
	case toolcallmarkup.StatusPending:
		return "Preparing the plan…"
	case toolcallmarkup.StatusRunning:
		return "Updating the plan…"
	case toolcallmarkup.StatusSuccess:
		if n, err := strconv.Atoi(Attr(tc, "count")); err == nil && n >= 0 {
			return "Plan updated (" + strconv.Itoa(n) + " items)"
		}
		return "Plan updated"
	case toolcallmarkup.StatusError:
		return "Plan update failed"
	default:
		return "Plan update cancelled"
	}
}

// Generic is the status text of tool types without one of their own:
// "Preparing <type>…", "Running <type>…", "<type> finished", "<type> failed",
// "<type> cancelled".
func Generic(tc toolcallmarkup.ToolCall) string {
	name := Truncate(tc.Type, DisplayLimit)
	if name == "" {
		name = "tool"
	}
	switch Normalize(tc.Status) {
	case toolcallmarkup.StatusPending:
		return "Preparing " + name + "…"
	case toolcallmarkup.StatusRunning:
		return "Running " + name + "…"
	case toolcallmarkup.StatusSuccess:
		return name + " finished"
	case toolcallmarkup.StatusError:
		return name + " failed"
	default:
		return name + " cancelled"
	}
}

// Normalize maps an unknown status to pending: a widget shows a spinner
// rather than a made-up final state.
func Normalize(s toolcallmarkup.Status) toolcallmarkup.Status {
	switch s {
	case toolcallmarkup.StatusPending, toolcallmarkup.StatusRunning, toolcallmarkup.StatusSuccess,
		toolcallmarkup.StatusError, toolcallmarkup.StatusCancelled:
		return s
	}
	return toolcallmarkup.StatusPending
}
