package testserver

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/toolmark/toolmark/internal/harness/pgtest"
)

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// Binary returns the path of a toolmark binary built from the tree, for
// tests that run `toolmark serve` or another subcommand as a child
// process. It is built once per test binary and removed by Main.
func Binary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "toolmark-test-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binDir, binPath = dir, filepath.Join(dir, "toolmark")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/toolmark/toolmark/cmd/toolmark").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("building toolmark: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return binPath
}

// Main runs a package's tests, then stops pgtest's server and removes the
// binary Binary built, and exits with the tests' code. Call it from
// TestMain.
func Main(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// Buffer is a bytes.Buffer that a child process or another goroutine may
// write while the test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the buffer.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
