package demo

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// explicitCalls returns the calls a question spells out: each offered tool
// name followed by a JSON object (`everything_echo {"message": "hi"}`), in
// the order they appear, so that any tool can be tried without a real model.
func explicitCalls(question string, offered map[string]bool, salt int) []llms.ToolCall {
	names := make([]string, 0, len(offered))
	for n := range offered {
		names = append(names, n)
	}
	// The longest name first, so that a name that is the prefix of
	// another does not take its place.
	sort.Slice(names, func(i, j int) bool {
		return len(names[i]) > len(names[j]) || len(names[i]) == len(names[j]) && names[i] < names[j]
	})
	type found struct {
		at         int
		name, args string
	}
	var calls []found
	taken := make([]bool, len(question))
	for _, name := range names {
		for from := 0; ; {
			i := strings.Index(question[from:], name)
			if i < 0 {
				break
			}
			at := from + i
			from = at + len(name)
			if taken[at] || (at > 0 && nameByte(question[at-1])) || (from < len(question) && nameByte(question[from])) {
				continue
			}
			rest := strings.TrimLeft(question[from:], " \t\n:")
			if !strings.HasPrefix(rest, "{") {
				continue
			}
			var obj map[string]any
			dec := json.NewDecoder(strings.NewReader(rest))
			dec.UseNumber()
			if dec.Decode(&obj) != nil {
				continue
			}
			args := rest[:dec.InputOffset()]
			var compact bytes.Buffer
			if json.Compact(&compact, []byte(args)) == nil {
				args = compact.String()
			}
			for k := at; k < from; k++ {
				taken[k] = true
			}
			calls = append(calls, found{at: at, name: name, args: args})
		}
	}
	sort.Slice(calls, func(i, j int) bool { return calls[i].at < calls[j].at })
	out := make([]llms.ToolCall, len(calls))
	for i, c := range calls {
		out[i] = newCall(salt, i, c.name, c.args)
	}
	return out
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// composeResults writes the answer to a question that named its calls:
// what each returned, or why it failed.
func composeResults(question string, results []toolResult) string {
	c := &composer{quoted: map[string]bool{}}
	c.unasked(results, make([]bool, len(results)))
	return c.write(question)
}
