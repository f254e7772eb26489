package app

import (
	"strings"
	"testing"
)

func TestParseModels(t *testing.T) {
	env := func(k string) string {
		if k == "KEY_SET" {
			return "sk-1"
		}
		return ""
	}
	ms, err := ParseModels([]byte(`[{"id":"a","provider":"openai","name":"gpt-4o-mini","apiKeyEnv":"KEY_SET","images":true},
		{"id":"b","label":"Demo","provider":"demo","default":true}]`), env)
	if err != nil || len(ms) != 2 || ms[0].APIKey != "sk-1" || ms[0].Label != "a" || !ms[0].Images || !ms[1].Default || ms[1].Label != "Demo" {
		t.Fatalf("%+v, %v", ms, err)
	}
	for _, c := range []struct{ in, want string }{
		{`[{"id":"a","provider":"cohere","name":"x"}]`, `model "a" has unknown provider "cohere"`},
		{`[{"id":"a","provider":"demo"},{"id":"a","provider":"demo"}]`, `model "a" is listed twice`},
		{`[{"id":"a","provider":"openai","name":"x","apiKeyEnv":"KEY_UNSET"}]`, `model "a" takes its key from KEY_UNSET, which is not set`},
		{`[{"id":"a","provider":"anthropic"}]`, `model "a" needs a name`},
		{`[{"id":"a b","provider":"demo"}]`, `model id "a b" must be`},
		{`[{"id":"a","provider":"demo","default":true},{"id":"b","provider":"demo","default":true}]`, `2 models are marked default`},
		{`[]`, `the models list is empty`},
		{`{"id":"a"}`, `not a JSON list`},
		{`[{"id":"a","provider":"demo","key":"sk"}]`, `not a JSON list`},
	} {
		if _, err := ParseModels([]byte(c.in), env); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
	}
}

func FuzzParseModels(f *testing.F) {
	f.Add([]byte(`[{"id":"a","provider":"openai","name":"gpt","apiKeyEnv":"K","default":true}]`))
	f.Add([]byte(`[{"id":"b","provider":"demo"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := ParseModels(data, func(string) string { return "k" })
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, m := range ms {
			if !modelIDPattern.MatchString(m.ID) || seen[m.ID] || m.Label == "" {
				t.Fatalf("accepted %+v", m)
			}
			seen[m.ID] = true
		}
	})
}
