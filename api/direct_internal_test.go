package api

import (
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// TestTakenStreamCutOff times a write out while the client reads nothing,
// then lets the client read: the stream writes nothing more, not even the
// body's end, so the client sees a body cut off and resumes, not one that
// ended whole without its last events.
func TestTakenStreamCutOff(t *testing.T) {
	server, client := net.Pipe()
	defer client.Close()
	ts := &takenStream{conn: server, timeout: 50 * time.Millisecond}
	err := ts.Text("data: " + strings.Repeat("x", 1000) + "\n\n")
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the write to a client that reads nothing: %v, want a timeout", err)
	}
	got := make(chan string)
	go func() {
		b, _ := io.ReadAll(client)
		got <- string(b)
	}()
	if err := ts.Text(keepAlive); err == nil {
		t.Error("a write after the timeout went through")
	}
	ts.end()
	server.Close()
	if b := <-got; b != "" {
		t.Errorf("after the timeout the client read %q, want nothing", b)
	}
}
