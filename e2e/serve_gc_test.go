package e2e

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark/internal/harness/bench"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// TestServeGCPercent: `toolmark serve` sets the garbage collector's target
// to 200 % unless told otherwise; GOGC wins over the default but not over
// the flag; a target that is not a positive percent is refused before
// anything starts. The target is read back from the server's /metrics.
func TestServeGCPercent(t *testing.T) {
	t.Parallel()
	bin := testserver.Binary(t)
	for _, c := range []struct {
		name  string
		flags []string
		env   []string
		want  string
	}{
		{"default", nil, nil, "200"},
		{"GOGC", nil, []string{"GOGC=50"}, "50"},
		{"flag over GOGC", []string{"--gc-percent", "300"}, []string{"GOGC=50"}, "300"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			srv, err := bench.StartServer(ctx, bench.ServerConfig{
				Command:     append([]string{bin, "serve"}, c.flags...),
				DatabaseURL: pgtest.URL(t),
				Env:         append(append(os.Environ(), "GOGC="), c.env...),
			})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Stop()
			if got := gcPercent(t, srv.URL); got != c.want {
				t.Errorf("go_gc_gogc_percent = %s, want %s", got, c.want)
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		out, err := exec.Command(bin, "serve", "--gc-percent", "0", "--addr", "127.0.0.1:0").CombinedOutput()
		if err == nil {
			t.Fatalf("serve --gc-percent 0 started: %s", out)
		}
		if !strings.Contains(string(out), "--gc-percent must be a positive percent, not 0") {
			t.Errorf("serve --gc-percent 0 said %q", out)
		}
	})
}

// gcPercent returns the value of go_gc_gogc_percent on the server's
// /metrics.
func gcPercent(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_gc_gogc_percent "); ok {
			return v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatal("no go_gc_gogc_percent on /metrics")
	return ""
}
