package openaiwire

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzContentParts feeds arbitrary JSON as a content field: no panic; a
// string is its own one text part; an array's text parts, in order, are
// its "text" values, thinking apart.
func FuzzContentParts(f *testing.F) {
	for _, s := range []string{`"hello"`, `null`, `[{"type":"text","text":"a"},{"type":"thinking","thinking":[{"type":"text","text":"b"}]}]`,
		`[{"type":"thinking","thinking":"plain"}]`, `[{"type":"image_url","image_url":{"url":"x"}}]`, `42`, `[{"type":"thinking","thinking":[1]}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		parts, err := contentParts(json.RawMessage(raw))
		if err != nil {
			return
		}
		var s string
		if strings.HasPrefix(strings.TrimSpace(raw), `"`) && json.Unmarshal([]byte(raw), &s) == nil {
			if len(parts) != 1 || parts[0].text != s || parts[0].thinking {
				t.Fatalf("string %q read as %+v", s, parts)
			}
			return
		}
		var arr []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal([]byte(raw), &arr) != nil {
			return
		}
		var want, got strings.Builder
		for _, p := range arr {
			if p.Type == "text" {
				want.WriteString(p.Text)
			}
		}
		for _, p := range parts {
			if !p.thinking {
				got.WriteString(p.text)
			}
		}
		if got.String() != want.String() {
			t.Fatalf("%s: text %q, want %q", raw, got.String(), want.String())
		}
	})
}
