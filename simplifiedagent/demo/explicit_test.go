package demo

import (
	"encoding/json"
	"testing"
)

func TestExplicitCalls(t *testing.T) {
	offered := map[string]bool{"everything_echo": true, "echo": true, "everything_get-sum": true, "search_documents": true}
	tests := []struct {
		name, q string
		want    []string // name + " " + arguments
	}{
		{"one", `everything_echo {"message": "hi"}`, []string{`everything_echo {"message":"hi"}`}},
		{"in order, longest name", `Try everything_get-sum {"a": 1, "b": 2} and then echo: {"message": "x"}`,
			[]string{`everything_get-sum {"a":1,"b":2}`, `echo {"message":"x"}`}},
		{"no object", `what does everything_echo do?`, nil},
		{"broken object", `everything_echo {"message": }`, nil},
		{"not offered", `fetch_url {"url": "x"}`, nil},
		{"inside a word", `myeverything_echo {"a": 1}`, nil},
		{"not an object", `echo ["a"]`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := explicitCalls(tt.q, offered, 1)
			if len(calls) != len(tt.want) {
				t.Fatalf("got %d calls, want %d", len(calls), len(tt.want))
			}
			for i, c := range calls {
				if got := c.FunctionCall.Name + " " + c.FunctionCall.Arguments; got != tt.want[i] {
					t.Errorf("call %d: got %s, want %s", i, got, tt.want[i])
				}
			}
		})
	}
}

// FuzzExplicitCalls: any question gives calls of offered tools with JSON
// object arguments, with distinct ids, without panicking.
func FuzzExplicitCalls(f *testing.F) {
	for _, s := range []string{`everything_echo {"message": "hi"}`, `echo {"a": {"b": [1, 2]}} echo {}`, `echo {`, "echo\n{\"x\":\"\\u00e9\"}"} {
		f.Add(s)
	}
	offered := map[string]bool{"everything_echo": true, "echo": true, "e": true}
	f.Fuzz(func(t *testing.T, q string) {
		ids := map[string]bool{}
		for _, c := range explicitCalls(q, offered, 0) {
			if !offered[c.FunctionCall.Name] || ids[c.ID] {
				t.Fatalf("call %+v", c)
			}
			ids[c.ID] = true
			var m map[string]any
			if err := json.Unmarshal([]byte(c.FunctionCall.Arguments), &m); err != nil || m == nil {
				t.Fatalf("arguments %q: %v", c.FunctionCall.Arguments, err)
			}
		}
	})
}
