// Package statustext writes the status a tool call shows — in a rendered
// widget, in the web page's status bubble and in the terminal client — from
// its tag. The server writes it once into every tool_call_* event
// (ToolCallData.StatusText), so no client keeps a copy of these rules.
//
// # Two lines
//
// A status names what the tool does and, when there is one, what it does it
// to: the query, the URL or the sub-agent's task. That subject goes on a
// second line, after a "\n", cut to DisplayLimit characters:
//
//	Searching knowledge base for:
//	resume after a dropped connection
//
// A status without a subject is one line ("Preparing search…"). A client
// shows the "\n" as a line break (CSS white-space: pre-line, or two
// terminal lines), or splits it with Lines.
//
// It imports only the standard library and toolcallmarkup.
package statustext

import (
	"strconv"
	"strings"

	"github.com/toolmark/toolmark/toolcallmarkup"
)

// Func returns the plain-text status a widget shows for tc, e.g.
// "Searching knowledge base for:\ngo generics". Whoever shows it escapes
// it.
type Func func(tc toolcallmarkup.ToolCall) string

// Thinking is the status a client shows while the model works and no tool
// runs: before the first token of an answer, and between a tool's end and
// the next token.
const Thinking = "Thinking…"

// Thought is the summary of a reasoning model's folded thinking once it
// has thought for ms milliseconds: "Thought for 12 s" (at least 1 s).
func Thought(ms int64) string {
	return "Thought for " + strconv.FormatInt(max(1, (ms+500)/1000), 10) + " s"
}

// Queued is the status a client shows while a turn waits for a free slot.
const Queued = "Waiting for a free slot…"

// Lines splits a status into its first line and its subject ("" when it
// has one line).
func Lines(text string) (head, subject string) {
	head, subject, _ = strings.Cut(text, "\n")
	return head, subject
}

// withSubject returns head alone, or head and the subject s (cut to
// DisplayLimit runes, on one line) on a second line.
func withSubject(head, s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return head
	}
	return head + ":\n" + toolcallmarkup.ShortenRunes(s, DisplayLimit)
}

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

// Line returns the status line of a call as its last event left it: the
// text the server wrote (text), or, for an event older than that field, the
// text of its tag (markup).
func Line(text, markup string) string {
	if text != "" {
		return text
	}
	if tc, err := toolcallmarkup.ParseOpenTag(markup); err == nil {
		return Text(tc)
	}
	return ""
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

func searchText(running, done, results, noun string) Func {
	return func(tc toolcallmarkup.ToolCall) string {
		q := Attr(tc, "query")
		switch Normalize(tc.Status) {
		case toolcallmarkup.StatusPending:
			return "Preparing " + lowerFirst(noun) + "…"
		case toolcallmarkup.StatusRunning:
			if strings.TrimSpace(q) == "" {
				return running + "…"
			}
			return withSubject(running+" for", q)
		case toolcallmarkup.StatusSuccess:
			n, err := strconv.Atoi(Attr(tc, "count"))
			if err != nil || n < 0 {
				return withSubject(done+" for", q)
			}
			word := results
			if n == 1 {
				word = results[:len(results)-1]
			}
			return withSubject("Found "+strconv.Itoa(n)+" "+word+" for", q)
		case toolcallmarkup.StatusError:
			return withSubject(noun+" failed for", q)
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
	u := Attr(tc, "url")
	switch Normalize(tc.Status) {
	case toolcallmarkup.StatusPending:
		return "Preparing to fetch a page…"
	case toolcallmarkup.StatusRunning:
		if strings.TrimSpace(u) == "" {
			return "Fetching a page…"
		}
		return withSubject("Fetching", u)
	case toolcallmarkup.StatusSuccess:
		if strings.TrimSpace(u) == "" {
			return "Fetched a page"
		}
		return withSubject("Fetched", u)
	case toolcallmarkup.StatusError:
		if strings.TrimSpace(u) == "" {
			return "Fetch failed"
		}
		return withSubject("Could not fetch", u)
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
		if strings.TrimSpace(task) == "" {
			return "Sub-agent working…"
		}
		return withSubject("Sub-agent working on", task)
	case toolcallmarkup.StatusSuccess:
		return withSubject("Sub-agent finished", task)
	case toolcallmarkup.StatusError:
		return withSubject("Sub-agent failed", task)
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
			if n == 1 {
				return "Plan updated (1 item)"
			}
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
// "<type> cancelled". A tag with a tool attribute (an MCP tool's own name)
// is named by it instead of its type.
func Generic(tc toolcallmarkup.ToolCall) string {
	name := Attr(tc, "tool")
	if name == "" {
		name = tc.Type
	}
	name = toolcallmarkup.ShortenRunes(name, DisplayLimit)
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

// Progress returns the status line of a running call that reported
// progress: the tool's name and how far it got ("trigger-long-running-operation:
// 2 of 3", "export: 40", "index: 50%" when total is 100), with the tool's
// message, when it sent one, as the subject on a second line. The name is
// the tag's tool attribute (an MCP tool's own name) or else its type.
func Progress(tc toolcallmarkup.ToolCall, progress, total float64, message string) string {
	name := Attr(tc, "tool")
	if name == "" {
		name = tc.Type
	}
	name = toolcallmarkup.ShortenRunes(name, DisplayLimit)
	head := name + ": " + number(progress)
	switch {
	case total == 100:
		head += "%"
	case total > 0:
		head += " of " + number(total)
	}
	message = strings.Join(strings.Fields(message), " ")
	if message == "" {
		return head
	}
	return head + "\n" + toolcallmarkup.ShortenRunes(message, DisplayLimit)
}

// number writes f without a fraction when it has none, else with one
// decimal.
func number(f float64) string {
	if f == float64(int64(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', 1, 64)
}
