package e2e

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark/internal/harness/mcptest"
	"github.com/toolmark/toolmark/internal/harness/testserver"
	"github.com/toolmark/toolmark/simplifiedagent/mcptools"
)

// everythingServer starts a test server whose agent has server-everything
// (stdio) and a server that cannot start.
func everythingServer(t *testing.T) *testserver.Server {
	t.Helper()
	cmd, args := mcptest.Everything(t)
	raw, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": cmd, "args": args},
		"broken":     map[string]any{"command": "/nonexistent/mcp-server"},
	}})
	cfg, err := mcptools.Parse(raw, "mcp.json", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	srv := testserver.Start(t, testserver.Options{DemoDelay: 10 * time.Millisecond, MCP: cfg})
	// Until everything has started (node takes its time on a busy
	// machine), its tools are not offered yet.
	end := time.Now().Add(60 * time.Second)
	for {
		var tools struct {
			Servers []struct{ Name, Status string } `json:"servers"`
		}
		if resp, err := http.Get(srv.URL + "/api/tools"); err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&tools)
			resp.Body.Close()
		}
		for _, s := range tools.Servers {
			if s.Name == "everything" && s.Status == "connected" {
				return srv
			}
		}
		if time.Now().After(end) {
			t.Fatalf("server-everything did not connect within a minute: %+v", tools.Servers)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBrowserMCP: the page lists the MCP servers and their tools, shows a
// call's progress in the status bubble, ends it cancelled within a second
// of Stop, and shows a result image in the call's details.
func TestBrowserMCP(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	srv := everythingServer(t)
	out := runScript(t, "mcp.mjs", srv.URL)
	if m := regexp.MustCompile(`stop to cancelled tag: \d+ ms`).FindString(out); m != "" {
		t.Log(m)
	}
}

// TestTUIMCP: /tools lists the servers and their tools, and a call's
// progress shows in the terminal's status line.
func TestTUIMCP(t *testing.T) {
	srv := everythingServer(t)
	tm := startTerm(t, srv.URL, 120, 40)
	tm.waitText("offline demo model")
	tm.typeLine("/tools")
	screen := tm.waitFor("the tools screen", func(s string) bool {
		return strings.Contains(s, "MCP server everything") && strings.Contains(s, "connected")
	})
	for _, want := range []string{"Built-in tools", "search_documents", "everything_echo", "MCP server broken", "failed",
		"the command of the broken tool server could not be started"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the tools screen lacks %q:\n%s", want, screen)
		}
	}
	tm.keys("Escape")
	tm.waitText("No messages yet") // an Esc with keys right after it would be read as Alt+key
	tm.typeLine(`everything_trigger-long-running-operation {"duration": 6, "steps": 3}`)
	tm.waitText("trigger-long-running-operation: 1 of 3")
	tm.waitFor("the end of the turn", func(s string) bool {
		return strings.Contains(s, "The everything_trigger-long-running-operation tool returned")
	})
}

// TestServeMCPConfigError: a config mistake stops serve with exit status 2
// and a line naming the file, the server and the field.
func TestServeMCPConfigError(t *testing.T) {
	bin := toolmarkBin(t)
	file := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(file, []byte(`{"mcpServers": {"files": {"type": "http", "url": "ftp://x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--mcp-config", file)
	cmd.Env = append(os.Environ(), "DATABASE_URL=postgres://nobody@127.0.0.1:1/none")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("exit: %v\n%s", err, out)
	}
	if want := `MCP config ` + file + `: server "files": field "url"`; !strings.Contains(string(out), want) {
		t.Errorf("output %q lacks %q", out, want)
	}
}
