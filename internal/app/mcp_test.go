package app_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark/api"
	"github.com/toolmark/toolmark/internal/harness/mcptest"
	"github.com/toolmark/toolmark/internal/harness/testserver"
	"github.com/toolmark/toolmark/simplifiedagent/mcptools"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

func getTools(t *testing.T, base string) api.Tools {
	t.Helper()
	resp, err := http.Get(base + "/api/tools")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out api.Tools
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&out) != nil {
		t.Fatalf("GET /api/tools: %d", resp.StatusCode)
	}
	return out
}

// TestMCPServers runs the server with server-everything and two servers
// that cannot work: GET /api/tools lists the built-in tools, everything's
// tools and the three servers' states; a demo turn calls four of
// everything's tools, and each tag is success in the stored message.
func TestMCPServers(t *testing.T) {
	cmd, args := mcptest.Everything(t)
	raw, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": cmd, "args": args},
		"nocmd":      map[string]any{"command": "/nonexistent/server"},
		"down":       map[string]any{"type": "sse", "url": "http://127.0.0.1:1/sse"},
	}})
	cfg, err := mcptools.Parse(raw, "mcp.json", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	srv := testserver.Start(t, testserver.Options{MCP: cfg})
	var tools api.Tools
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		tools = getTools(t, srv.URL)
		if states(tools) == "down:failed everything:connected nocmd:failed" || time.Now().After(end) {
			break
		}
	}
	if got := states(tools); got != "down:failed everything:connected nocmd:failed" {
		t.Fatalf("servers: %s (%+v)", got, tools.Servers)
	}
	byName := map[string]api.ToolInfo{}
	for _, tl := range tools.Tools {
		byName[tl.Name] = tl
	}
	if b := byName["search_documents"]; b.Server != "" || b.Tool != "search_documents" {
		t.Errorf("built-in: %+v", b)
	}
	if e := byName["everything_get-sum"]; e.Server != "everything" || e.Tool != "get-sum" || e.Description == "" {
		t.Errorf("get-sum: %+v", e)
	}
	for _, s := range tools.Servers {
		if s.Status == "failed" && (s.Error == "" || strings.Contains(s.Error, "127.0.0.1") || strings.Contains(s.Error, "/nonexistent")) {
			t.Errorf("%s: error %q", s.Name, s.Error)
		}
	}

	conv, turn := chat(t, srv.URL, "", `everything_echo {"message": "hi"} everything_get-sum {"a": 1, "b": 2} `+
		`everything_get-structured-content {"location": "New York"} everything_get-tiny-image {}`)
	// As a page loaded afterwards reads it.
	resp, err := http.Get(srv.URL + "/api/conversations/" + conv)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || len(page.Messages) != 2 {
		t.Fatalf("conversation: %v %+v", err, page)
	}
	content := page.Messages[1].Content
	calls := toolcallmarkup.Parse(content)
	if len(calls) != 4 {
		t.Fatalf("%d tags in the stored answer, want 4:\n%s", len(calls), content)
	}
	imageCall := ""
	for _, c := range calls {
		if c.Status != toolcallmarkup.StatusSuccess || !strings.Contains(toolcallmarkup.OpenTag(c), `server="everything"`) {
			t.Errorf("stored tag: %s", toolcallmarkup.OpenTag(c))
		}
		if c.Type == "everything_get-tiny-image" {
			imageCall = c.ID
		}
	}
	// A sub-agent has the MCP tools too: its call nests in its tag.
	chat(t, srv.URL, conv, `subagent {"task": "everything_echo {\"message\": \"from below\"}"}`)
	if !nestedEcho(t, srv.URL, conv) {
		t.Error("the sub-agent did not call everything_echo")
	}
	// The image is served as an image, sniffed, with nosniff.
	base := srv.URL + "/api/turns/" + turn.ID + "/tool-calls/" + imageCall + "/images/"
	for _, tt := range []struct {
		n      string
		status int
	}{{"0", 200}, {"1", 404}, {"x", 404}} {
		resp, err := http.Get(base + tt.n)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("image %s: %d, want %d", tt.n, resp.StatusCode, tt.status)
		}
		if tt.status == 200 && (resp.Header.Get("Content-Type") != "image/png" || resp.Header.Get("X-Content-Type-Options") != "nosniff") {
			t.Errorf("image headers: %v", resp.Header)
		}
	}
}

// nestedEcho reports whether the conversation's last answer holds a
// successful everything_echo call nested in a sub-agent's tag.
func nestedEcho(t *testing.T, base, conv string) bool {
	t.Helper()
	resp, err := http.Get(base + "/api/conversations/" + conv)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || len(page.Messages) == 0 {
		t.Fatalf("conversation: %v", err)
	}
	for _, c := range toolcallmarkup.Parse(page.Messages[len(page.Messages)-1].Content) {
		if c.Type == "everything_echo" && c.ParentID != "" && c.Status == toolcallmarkup.StatusSuccess {
			return true
		}
	}
	return false
}

func states(t api.Tools) string {
	var s []string
	for _, x := range t.Servers {
		s = append(s, x.Name+":"+x.Status)
	}
	return strings.Join(s, " ")
}

// TestToolsWithoutMCP: with no MCP config the server offers its built-in
// tools and no server.
func TestToolsWithoutMCP(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	tools := getTools(t, srv.URL)
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, " "); got != "search_documents fetch_url todo_list subagent" || len(tools.Servers) != 0 {
		t.Errorf("tools %q, servers %+v", got, tools.Servers)
	}
}
