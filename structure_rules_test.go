package toolmark_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStructureRules runs the checker of TestStructure over small trees
// that each break one rule, and over one that breaks none.
func TestStructureRules(t *testing.T) {
	longBody := strings.Repeat("\t_ = 1\n", 99) // with its two braces' lines: 101
	tests := []struct {
		name  string
		files map[string]string
		want  string // a part of the one violation; "" for none
	}{
		{"clean", map[string]string{
			"events.go":        "package toolmark\n\nimport \"encoding/json\"\n\nvar _ json.RawMessage\n",
			"fanout/hub.go":    "package fanout\n\nimport _ \"github.com/toolmark/toolmark/liveview\"\n",
			"api/server.go":    "package api\n\nimport _ \"github.com/go-chi/chi/v5\"\n",
			"runner/runner.go": "package runner\n\nvar f = func() {\n" + strings.Repeat("\t_ = 1\n", 98) + "}\n",
		}, ""},
		{"goldmark in the root", map[string]string{
			"events.go": "package toolmark\n\nimport _ \"github.com/yuin/goldmark\"\n",
		}, "package . imports github.com/yuin/goldmark; it imports the standard library only"},
		{"a module package in toolcallmarkup", map[string]string{
			"toolcallmarkup/a.go": "package toolcallmarkup\n\nimport _ \"github.com/toolmark/toolmark\"\n",
		}, "it imports the standard library only"},
		{"store in fanout", map[string]string{
			"fanout/hub.go": "package fanout\n\nimport _ \"github.com/toolmark/toolmark/store\"\n",
		}, "package fanout imports github.com/toolmark/toolmark/store"},
		{"api in runner", map[string]string{
			"runner/runner.go": "package runner\n\nimport _ \"github.com/toolmark/toolmark/api\"\n",
		}, "package runner imports github.com/toolmark/toolmark/api; that is above it"},
		{"the agent in api", map[string]string{
			"api/server.go": "package api\n\nimport _ \"github.com/toolmark/toolmark/simplifiedagent/demo\"\n",
		}, "that is above it"},
		{"store in client", map[string]string{
			"client/client.go": "package client\n\nimport _ \"github.com/toolmark/toolmark/store\"\n",
		}, "package client imports github.com/toolmark/toolmark/store"},
		{"fanout in liveview", map[string]string{
			"liveview/view.go": "package liveview\n\nimport _ \"github.com/toolmark/toolmark/fanout\"\n",
		}, "package liveview imports github.com/toolmark/toolmark/fanout"},
		{"a 101-line function literal in a var", map[string]string{
			"runner/runner.go": "package runner\n\nvar f = func() {\n" + longBody + "}\n",
		}, "a function literal has 101 lines"},
		{"a 101-line function", map[string]string{
			"api/server.go": "package api\n\nfunc f() {\n" + longBody + "}\n",
		}, "func f has 101 lines"},
		{"the harness in the wiring", map[string]string{
			"internal/app/app.go": "package app\n\nimport _ \"github.com/toolmark/toolmark/internal/harness/pgtest\"\n",
		}, "only commands and the harness import the harness"},
		{"the harness in its command and in itself", map[string]string{
			"cmd/toolmark/bench.go":              "package main\n\nimport _ \"github.com/toolmark/toolmark/internal/harness/bench\"\n",
			"internal/harness/faults/cluster.go": "package faults\n\nimport _ \"github.com/toolmark/toolmark/internal/harness/bench\"\n",
		}, ""},
		{"a main under internal", map[string]string{
			"internal/x/main.go": "package main\n",
		}, "package main under internal/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for name, src := range tt.files {
				path := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got := checkStructure(t, root)
			switch {
			case tt.want == "" && len(got) > 0:
				t.Fatalf("got %q, want no violation", got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
				t.Fatalf("got %q, want one violation with %q", got, tt.want)
			}
		})
	}
}
