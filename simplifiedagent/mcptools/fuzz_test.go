package mcptools_test

import (
	"errors"
	"net/url"
	"testing"

	"github.com/toolmark/toolmark/simplifiedagent/mcptools"
)

// FuzzParse: any file either is a ConfigError or gives servers that can be
// started: a known transport, a command for stdio, an http(s) URL for the
// others, a positive timeout.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers": {"a": {"command": "x", "args": ["${HOME}"], "env": {"K": "${V:-d}"}}}}`,
		`{"mcpServers": {"b": {"type": "http", "url": "https://h/mcp", "headers": {"A": "${T}"}, "timeout": 5}}}`,
		`{"mcpServers": {"c": {"type": "sse", "url": "http://h/sse", "disabled": true, "tools": ["x"]}}}`,
		`{"mcpServers": {"d": {"url": "ftp://x"}}}`, `{"mcpServers": null}`, `[]`,
	} {
		f.Add(s)
	}
	env := map[string]string{"HOME": "/h", "T": "t"}
	f.Fuzz(func(t *testing.T, text string) {
		cfg, err := mcptools.Parse([]byte(text), "f.json", func(k string) string { return env[k] })
		if err != nil {
			var ce *mcptools.ConfigError
			if !errors.As(err, &ce) || ce.File != "f.json" {
				t.Fatalf("error %v is not a ConfigError of the file", err)
			}
			return
		}
		for _, s := range cfg.Servers {
			if s.Timeout <= 0 {
				t.Fatalf("%s: timeout %v", s.Name, s.Timeout)
			}
			switch s.Transport {
			case mcptools.TransportStdio:
				if s.Command == "" {
					t.Fatalf("%s: no command", s.Name)
				}
			case mcptools.TransportHTTP, mcptools.TransportSSE:
				u, err := url.Parse(s.URL)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					t.Fatalf("%s: url %q", s.Name, s.URL)
				}
			default:
				t.Fatalf("%s: transport %q", s.Name, s.Transport)
			}
		}
	})
}
