// Package mcptest finds and starts the reference MCP servers the tests run
// against: @modelcontextprotocol/server-everything (stdio and streamable
// HTTP) and @modelcontextprotocol/server-filesystem, installed from the npm
// registry into internal/harness/mcptest/npm by scripts/need-mcp.sh. Without them a
// test is skipped, or fails when CI=true.
package mcptest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/toolmark/toolmark/internal/harness/need"
)

// Dir returns internal/harness/mcptest/npm.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "npm")
}

// installed returns node and the entry point of the reference MCP server
// pkg, or skips tb (fails it under CI=true) when either is missing.
func installed(tb testing.TB, pkg string) (node, main string) {
	tb.Helper()
	node, err := exec.LookPath("node")
	main = filepath.Join(Dir(), "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	if _, serr := os.Stat(main); err != nil || serr != nil {
		need.Missing(tb, "the reference MCP server "+pkg+" is not installed", "scripts/need-mcp.sh")
	}
	return node, main
}

// Everything returns the command and arguments that start server-everything
// over stdio.
func Everything(tb testing.TB) (command string, args []string) {
	tb.Helper()
	node, main := installed(tb, "server-everything")
	return node, []string{main, "stdio"}
}

// Filesystem returns the command and arguments that start server-filesystem
// serving dir.
func Filesystem(tb testing.TB, dir string) (command string, args []string) {
	tb.Helper()
	node, main := installed(tb, "server-filesystem")
	return node, []string{main, dir}
}

// EverythingHTTP starts server-everything over streamable HTTP on a free
// loopback port and returns its endpoint and a function that stops it (the
// test's cleanup stops it too).
func EverythingHTTP(tb testing.TB) (endpoint string, stop func()) {
	tb.Helper()
	node, main := installed(tb, "server-everything")
	port := freePort(tb)
	cmd := exec.Command(node, main, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			tb.Logf("server-everything: %s", sc.Text())
		}
	}()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	stop = func() {
		_ = cmd.Process.Kill()
		<-done
	}
	tb.Cleanup(stop)
	endpoint = fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return endpoint, stop
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.Fatal("server-everything did not listen within 20 s")
	return "", nil
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
