package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary doubles as a stdio MCP server (Go SDK) for the fault
// tests: with MCPTOOLS_FAKE set, TestMain serves fakeServer on stdin and
// stdout instead of running the tests.
func TestMain(m *testing.M) {
	if os.Getenv("MCPTOOLS_FAKE") != "" {
		if d, err := time.ParseDuration(os.Getenv("MCPTOOLS_FAKE_DELAY")); err == nil {
			time.Sleep(d) // a slow start
		}
		if err := fakeServer(os.Getenv("MCPTOOLS_FAKE_MARK"), 3).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "fake server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type noArgs struct{}

type sleepArgs struct {
	Steps int `json:"steps"`
	Ms    int `json:"ms"`
}

// fakeServer offers the faults: crash (the process exits mid-call), hang
// (never answers; writes mark when notifications/cancelled arrives), garbage
// (writes a line that is not JSON-RPC, then exits), fail (isError), slow
// (progress every ms milliseconds, steps times, then an answer), add (adds
// a tool "added", which sends tools/list_changed), ok. Its list is served in
// pages of pageSize.
func fakeServer(mark string, pageSize int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, &mcp.ServerOptions{PageSize: pageSize})
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	mcp.AddTool(s, &mcp.Tool{Name: "ok", Description: "answers ok"}, func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
		return text("ok from pid " + strconv.Itoa(os.Getpid())), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "exits mid-call"}, func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
		time.Sleep(100 * time.Millisecond)
		os.Exit(3)
		return nil, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "never answers"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
		<-ctx.Done()
		if mark != "" {
			_ = os.WriteFile(mark, []byte("cancelled"), 0o600)
		}
		return nil, nil, ctx.Err()
	})
	mcp.AddTool(s, &mcp.Tool{Name: "garbage", Description: "answers garbage"}, func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
		fmt.Fprintln(os.Stdout, `{"jsonrpc": "2.0", "id": [1, 2], "result": nope}`)
		fmt.Fprintln(os.Stdout, "\x1b[31mnot json at all")
		time.Sleep(200 * time.Millisecond)
		os.Exit(4)
		return nil, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "fails"}, func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
		r := text("the widget is jammed")
		r.IsError = true
		return r, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "reports progress"}, func(ctx context.Context, req *mcp.CallToolRequest, a sleepArgs) (*mcp.CallToolResult, any, error) {
		for i := 1; i <= a.Steps; i++ {
			select {
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			case <-time.After(time.Duration(a.Ms) * time.Millisecond):
			}
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok,
					Progress: float64(i), Total: float64(a.Steps), Message: "step " + strconv.Itoa(i)})
			}
		}
		return text("done"), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "adds a tool"}, func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
		mcp.AddTool(s, &mcp.Tool{Name: "added", Description: "was added"}, func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
			return text("added works"), nil, nil
		})
		return text("added a tool"), nil, nil
	})
	return s
}

// fakeStdio is a config of the fake server over stdio; extra env joins
// its env.
func fakeStdio(t *testing.T, timeout string, env map[string]string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := map[string]string{"MCPTOOLS_FAKE": "1"}
	for k, v := range env {
		e[k] = v
	}
	srv := map[string]any{"command": exe, "env": e}
	if timeout != "" {
		f, _ := strconv.ParseFloat(timeout, 64)
		srv["timeout"] = f
	}
	raw, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fake": srv}})
	return string(raw)
}
