package mcptools_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark/simplifiedagent/mcptools"
)

func TestParse(t *testing.T) {
	env := map[string]string{"TOKEN": "s3cret", "PATH": "/bin", "HOME": "/home/x", "DATABASE_URL": "postgres://no"}
	cfg, err := mcptools.Parse([]byte(`{"mcpServers": {
		"files": {"command": "npx", "args": ["-y", "pkg", "${HOME}/docs"], "env": {"API_TOKEN": "${TOKEN}", "MODE": "${MODE:-fast}"}, "timeout": 2.5, "tools": ["read"]},
		"remote": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
		"old": {"type": "sse", "url": "http://127.0.0.1:9/sse", "disabled": true, "autoApprove": []},
		"guess": {"url": "http://127.0.0.1:9/mcp"}
	}}`), "mcp.json", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]mcptools.ServerConfig{}
	for _, s := range cfg.Servers {
		byName[s.Name] = s
	}
	f := byName["files"]
	if f.Transport != "stdio" || f.Args[2] != "/home/x/docs" || f.Env["API_TOKEN"] != "s3cret" || f.Env["MODE"] != "fast" ||
		f.Timeout != 2500*time.Millisecond || len(f.Tools) != 1 {
		t.Errorf("files: %+v", f)
	}
	if r := byName["remote"]; r.Transport != "http" || r.Headers["Authorization"] != "Bearer s3cret" || r.Timeout != mcptools.DefaultTimeout {
		t.Errorf("remote: %+v", r)
	}
	if o := byName["old"]; o.Transport != "sse" || !o.Disabled {
		t.Errorf("old: %+v", o)
	}
	if g := byName["guess"]; g.Transport != "http" {
		t.Errorf("guess: %+v", g)
	}
	if len(cfg.Inherit) != 2 || cfg.Inherit["PATH"] != "/bin" || cfg.Inherit["DATABASE_URL"] != "" {
		t.Errorf("inherited: %v", cfg.Inherit)
	}
}

// TestParseErrors: every mistake names the file, the server and the field.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, text, server, field string
	}{
		{"not JSON", `{"mcpServers": `, "", ""},
		{"no mcpServers", `{"servers": {}}`, "", "mcpServers"},
		{"missing command", `{"mcpServers": {"a": {"args": ["x"]}}}`, "a", "command"},
		{"bad URL", `{"mcpServers": {"b": {"type": "http", "url": "not a url"}}}`, "b", "url"},
		{"ftp URL", `{"mcpServers": {"b": {"type": "sse", "url": "ftp://x/y"}}}`, "b", "url"},
		{"missing URL", `{"mcpServers": {"b": {"type": "http"}}}`, "b", "url"},
		{"wrong type", `{"mcpServers": {"c": {"type": "websocket", "url": "http://x/"}}}`, "c", "type"},
		{"type not a string", `{"mcpServers": {"c": {"type": 3, "command": "x"}}}`, "c", "type"},
		{"args not a list", `{"mcpServers": {"d": {"command": "x", "args": "-v"}}}`, "d", "args"},
		{"timeout text", `{"mcpServers": {"e": {"command": "x", "timeout": "60"}}}`, "e", "timeout"},
		{"timeout negative", `{"mcpServers": {"e": {"command": "x", "timeout": -1}}}`, "e", "timeout"},
		{"unset variable", `{"mcpServers": {"f": {"command": "x", "env": {"K": "${NOPE}"}}}}`, "f", "env.K"},
		{"server not an object", `{"mcpServers": {"g": "npx"}}`, "g", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mcptools.Parse([]byte(tt.text), "/etc/toolmark/mcp.json", func(string) string { return "" })
			var ce *mcptools.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a ConfigError", err)
			}
			if ce.File != "/etc/toolmark/mcp.json" || ce.Server != tt.server || ce.Field != tt.field {
				t.Errorf("got file %q server %q field %q, want server %q field %q", ce.File, ce.Server, ce.Field, tt.server, tt.field)
			}
			if !strings.Contains(err.Error(), "/etc/toolmark/mcp.json") {
				t.Errorf("%q does not name the file", err)
			}
		})
	}
	_, err := mcptools.Load(filepath.Join(t.TempDir(), "none.json"), nil)
	if err == nil || !strings.Contains(err.Error(), "none.json") {
		t.Errorf("a missing file: %v", err)
	}
}

// TestFailedServers: a command that does not exist and a URL where nothing
// listens are failed servers with a sentence, and no tools; the others
// work.
func TestFailedServers(t *testing.T) {
	cfg := mustParse(t, `{"mcpServers": {
		"nocmd": {"command": "/nonexistent/mcp-server"},
		"down": {"type": "http", "url": "http://127.0.0.1:1/mcp"},
		"off": {"command": "/nonexistent/x", "disabled": true}
	}}`, nil)
	m := mustStart(t, cfg)
	st := m.Servers()
	if len(st) != 2 {
		t.Fatalf("servers: %+v", st)
	}
	want := map[string]string{"nocmd": "the command of the nocmd tool server could not be started",
		"down": "the down tool server could not be reached"}
	for _, s := range st {
		if s.Status != mcptools.StatusFailed || s.Error != want[s.Name] || len(s.Tools) != 0 {
			t.Errorf("%s: %+v, want failed: %q", s.Name, s, want[s.Name])
		}
	}
	if len(m.Tools()) != 0 {
		t.Errorf("tools of failed servers: %d", len(m.Tools()))
	}
}

func TestLoadFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(p, []byte(`{"mcpServers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := mcptools.Load(p, func(string) string { return "" })
	if err != nil || cfg.File != p || len(cfg.Servers) != 0 {
		t.Fatalf("%+v %v", cfg, err)
	}
}
