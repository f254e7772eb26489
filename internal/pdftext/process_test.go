package pdftext_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/toolmark/toolmark/internal/pdftext"
)

// TestServeChild is the child of the Command tests: this test binary run
// with "child" and Command's arguments serves one PDF and exits.
func TestServeChild(t *testing.T) {
	i := slices.Index(os.Args, "child")
	if i < 0 {
		t.Skip("run as the child of TestCommand")
	}
	if err := pdftext.Serve(os.Args[i+1:], os.Stdin, os.Stdout); err != nil {
		os.Exit(2)
	}
	os.Exit(0)
}

// TestCommand: a PDF read in a child process gives what Text gives; a
// child that never answers is killed at the timeout; one that dies is a
// damaged file.
func TestCommand(t *testing.T) {
	self := pdftext.Command{os.Args[0], "-test.run=^TestServeChild$", "child"}
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		cmd  pdftext.Command
		pdf  []byte
		want string
		err  error
	}{
		{"text", self, handWritten, "Hand written\nPDF", nil},
		{"encrypted", self, mustPDF(t, "pw", "x"), "", pdftext.ErrEncrypted},
		{"no text", self, loopedPages, "", pdftext.ErrNoText},
		{"in this process", nil, handWritten, "Hand written\nPDF", nil},
		{"a child that hangs", pdftext.Command{"sh", "-c", "sleep 30", "sh"}, handWritten, "", pdftext.ErrTooSlow},
		{"a child that dies", pdftext.Command{"sh", "-c", "kill -SEGV $$", "sh"}, handWritten, "", pdftext.ErrDamaged},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.cmd.Text(ctx, tt.pdf, pdftext.Limits{Timeout: 100 * time.Millisecond})
			if got != tt.want || !errors.Is(err, tt.err) {
				t.Errorf("got %q, %v; want %q, %v", got, err, tt.want, tt.err)
			}
		})
	}
}
