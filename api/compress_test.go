package api

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

func TestAcceptedCodings(t *testing.T) {
	for in, want := range map[string]string{
		"gzip":                         "gzip",
		"gzip;q=0":                     "",
		"gzip; q=0.000, deflate":       "deflate",
		"GZIP;Q=0, br;q=1":             "br",
		"gzip;q=0.5, deflate;q=0":      "gzip",
		"gzip;level=1;q=0":             "",
		"gzip;q=x":                     "gzip",
		" , gzip ;q=1 ,, identity;q=0": "gzip",
	} {
		if got := acceptedCodings(in); got != want {
			t.Errorf("acceptedCodings(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzAcceptedCodings: whatever a client sends, what is left is a list of
// the names it sent, without parameters, and reading it again changes
// nothing.
func FuzzAcceptedCodings(f *testing.F) {
	for _, s := range []string{"gzip", "gzip;q=0", "gzip;q=0, deflate;q=0.5", ";;,;", "gzip;q=1e-400", "\xff;q=0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got := acceptedCodings(v)
		if strings.Contains(got, ";") {
			t.Fatalf("acceptedCodings(%q) = %q keeps parameters", v, got)
		}
		for _, name := range strings.Split(got, ", ") {
			if got != "" && (name == "" || !strings.Contains(v, name)) {
				t.Fatalf("acceptedCodings(%q) = %q: %q was not sent", v, got, name)
			}
		}
		if again := acceptedCodings(got); again != got {
			t.Fatalf("acceptedCodings(%q) = %q, then %q", v, got, again)
		}
	})
}

// TestGzipOffStack: writers compressing on the shared goroutines, from many
// goroutines at once and reused after Reset, each write a valid gzip
// stream of what was written.
func TestGzipOffStack(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out bytes.Buffer
			g := newGzipOffStack(&out)
			for round := range 3 {
				out.Reset()
				g.Reset(&out)
				var want bytes.Buffer
				for k := range 20 {
					p := []byte(strings.Repeat(fmt.Sprintf("data: %d %d %d\n\n", i, round, k), k+1))
					if n, err := g.Write(p); n != len(p) || err != nil {
						t.Errorf("Write = %d, %v", n, err)
						return
					}
					want.Write(p)
					if err := g.Flush(); err != nil {
						t.Error(err)
						return
					}
				}
				if err := g.Close(); err != nil {
					t.Error(err)
					return
				}
				zr, err := gzip.NewReader(&out)
				if err != nil {
					t.Error(err)
					return
				}
				got, err := io.ReadAll(zr)
				if err != nil || !bytes.Equal(got, want.Bytes()) {
					t.Errorf("writer %d, round %d: read back %d bytes (%v), want %d", i, round, len(got), err, want.Len())
				}
			}
		}()
	}
	wg.Wait()
}

// TestGzipOffStackWriteError: an error of the writer underneath is the
// write's, and a panic while compressing is raised in the caller.
func TestGzipOffStackWriteError(t *testing.T) {
	g := newGzipOffStack(failWriter{})
	if _, err := g.Write([]byte("data: x\n\n")); !errors.Is(err, errFail) {
		t.Errorf("Write error %v, want %v", err, errFail)
	}
	defer func() {
		if p := recover(); p != "boom" {
			t.Errorf("recovered %v, want boom", p)
		}
	}()
	compressing(func() { panic("boom") })
}

var errFail = errors.New("the connection is gone")

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errFail }
