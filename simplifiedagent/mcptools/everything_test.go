package mcptools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/mcptest"
	"github.com/toolmark/toolmark/simplifiedagent/mcptools"
)

// everythingStdio is a config of server-everything over stdio.
func everythingStdio(t *testing.T, env map[string]string) *mcptools.Config {
	cmd, args := mcptest.Everything(t)
	raw, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": cmd, "args": args, "env": map[string]string{"GREETING": "${GREETING}"}},
	}})
	if env == nil {
		env = map[string]string{}
	}
	env["GREETING"] = "hello from the config"
	return mustParse(t, string(raw), env)
}

// TestEverythingCalls calls echo, get-sum, get-structured-content and
// get-tiny-image of the reference server over stdio and over streamable
// HTTP through the demo model: each tag ends success with the server's
// result, structured content as JSON and the image described, never as
// base64.
func TestEverythingCalls(t *testing.T) {
	url, _ := mcptest.EverythingHTTP(t)
	configs := map[string]*mcptools.Config{
		"stdio": everythingStdio(t, nil),
		"http":  mustParse(t, `{"mcpServers": {"everything": {"type": "http", "url": "`+url+`"}}}`, nil),
	}
	for name, cfg := range configs {
		t.Run(name, func(t *testing.T) {
			m := mustStart(t, cfg)
			if st := m.Servers(); len(st) != 1 || st[0].Status != mcptools.StatusConnected {
				t.Fatalf("servers: %+v", st)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			tr := runTurn(ctx, t, m, `Try everything_echo {"message": "hi there"} then everything_get-sum {"a": 2, "b": 40} `+
				`and everything_get-structured-content {"location": "Chicago"} and everything_get-tiny-image {}`)
			if tr.err != nil {
				t.Fatal(tr.err)
			}
			finals := tr.finals()
			if len(finals) != 4 {
				t.Fatalf("got %d final events, want 4: %+v", len(finals), finals)
			}
			want := map[string]string{"everything_echo": "hi there", "everything_get-sum": "42",
				"everything_get-structured-content": `"temperature"`, "everything_get-tiny-image": "[image: image/png"}
			for _, f := range finals {
				if f.Status != "success" {
					t.Errorf("%s: status %s (%s), want success", f.Name, f.Status, f.Error)
				}
				if !strings.Contains(f.Result, want[f.Name]) || want[f.Name] == "" {
					t.Errorf("%s: result %q lacks %q", f.Name, f.Result, want[f.Name])
				}
				if !strings.Contains(f.Markup, `server="everything"`) {
					t.Errorf("%s: markup %s does not name the server", f.Name, f.Markup)
				}
			}
			for _, f := range finals {
				if f.Name == "everything_get-tiny-image" {
					if len(f.Images) != 1 || f.Images[0].MediaType != "image/png" || !strings.Contains(f.Markup, `images="1"`) {
						t.Errorf("the image: %d images, markup %s", len(f.Images), f.Markup)
					}
				} else if len(f.Images) != 0 {
					t.Errorf("%s: images %d", f.Name, len(f.Images))
				}
				if strings.Contains(f.Result, "iVBOR") {
					t.Errorf("the image went to the model as base64: %.80s", f.Result)
				}
			}
			for _, tc := range tr.state.Calls() {
				if !tc.Status.Final() {
					t.Errorf("tag %s is %s", tc.ID, tc.Status)
				}
			}
		})
	}
}

// TestEverythingProgressAndStop runs trigger-long-running-operation: its
// progress notifications become tool_progress events and the status
// bubble says "trigger-long-running-operation: 2 of 10"; cancelling the
// turn ends the tag cancelled within a second.
func TestEverythingProgressAndStop(t *testing.T) {
	m := mustStart(t, everythingStdio(t, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr, done := startTurn(ctx, m, `everything_trigger-long-running-operation {"duration": 20, "steps": 10}`)
	waitFor(t, 20*time.Second, "two tool_progress events", func() bool { return len(tr.ofType(toolmark.EventToolProgress)) >= 2 })
	p := tr.ofType(toolmark.EventToolProgress)[1].Data.(toolmark.ToolProgressData)
	if p.Progress != 2 || p.Total != 10 || p.ToolCallID == "" {
		t.Errorf("second progress: %+v", p)
	}
	if b := tr.bubble(); !strings.HasPrefix(b, "trigger-long-running-operation: 2 of 10") {
		t.Errorf("bubble %q, want trigger-long-running-operation: 2 of 10", b)
	}
	stop := time.Now()
	cancel()
	waitFor(t, 5*time.Second, "the turn's end", func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	})
	took := time.Since(stop)
	finals := tr.finals()
	if len(finals) != 1 || finals[0].Status != "cancelled" {
		t.Fatalf("finals: %+v", finals)
	}
	if took > time.Second {
		t.Errorf("the tag ended cancelled %v after the stop, want within 1 s", took)
	}
	t.Logf("stop to cancelled: %v", took)
}

// waitFor polls cond every 20 ms until it holds or d passed.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("no %s within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestEverythingEnv: get-env shows the stdio server only the variables its
// config lists plus PATH, HOME and LANG — none of toolmark's own.
func TestEverythingEnv(t *testing.T) {
	env := map[string]string{"PATH": os.Getenv("PATH"), "HOME": "/tmp", "DATABASE_URL": "postgres://secret",
		"ANTHROPIC_API_KEY": "sk-secret", "TOOLMARK_MCP_CONFIG": "x"}
	for k, v := range env {
		t.Setenv(k, v)
	}
	m := mustStart(t, everythingStdio(t, env))
	f := one(t, m, `everything_get-env {}`)
	var got map[string]string
	if err := json.Unmarshal([]byte(f.Result), &got); err != nil {
		t.Fatalf("get-env: %v: %.200s", err, f.Result)
	}
	allowed := map[string]bool{"PATH": true, "HOME": true, "LANG": true, "GREETING": true}
	for k := range got {
		if !allowed[k] {
			t.Errorf("the server sees %s", k)
		}
	}
	if got["GREETING"] != "hello from the config" || got["HOME"] != "/tmp" {
		t.Errorf("env: %v", got)
	}
	if strings.Contains(f.Result, "secret") {
		t.Error("a secret reached the server")
	}
}

// TestFilesystem reads a file through server-filesystem, whose tools
// answer with text and structured content.
func TestFilesystem(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("the lease is renewed every 10 s"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, args := mcptest.Filesystem(t, dir)
	raw, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"files": map[string]any{"command": cmd, "args": args, "tools": []string{"read_text_file", "list_directory"}}}})
	m := mustStart(t, mustParse(t, string(raw), map[string]string{"PATH": os.Getenv("PATH")}))
	if n := len(m.Tools()); n != 2 {
		t.Fatalf("%d tools, want the 2 of the allow-list", n)
	}
	path, _ := json.Marshal(filepath.Join(dir, "notes.txt"))
	f := one(t, m, `files_read_text_file {"path": `+string(path)+`}`)
	if f.Status != "success" || !strings.Contains(f.Result, "renewed every 10 s") {
		t.Errorf("read: %+v", f)
	}
	f = one(t, m, `files_read_text_file {"path": "/etc/passwd"}`)
	if f.Status != "error" || f.Error == "" {
		t.Errorf("outside its directory: %+v", f)
	}
}
