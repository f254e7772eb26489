package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// TestTUIAttach: /attach PATH uploads a file, the next question carries it
// and the demo model names it; a path that is no file says so.
func TestTUIAttach(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	path := filepath.Join(t.TempDir(), "groceries.md")
	if err := os.WriteFile(path, []byte("# Groceries\nmilk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tm := startTerm(t, srv.URL, 120, 30)
	tm.waitText("/help")
	tm.typeLine("/attach " + filepath.Join(t.TempDir(), "missing.txt"))
	tm.waitText("not a file")
	tm.typeLine("/attach " + path)
	tm.waitText("Attached to your next message: groceries.md (text/markdown, 17 bytes).")
	tm.typeLine("What did I attach?")
	tm.waitText("You attached")
	cv := onlyConversation(t, srv.URL)
	if len(cv.Messages) == 0 || len(cv.Messages[0].Attachments) != 1 || cv.Messages[0].Attachments[0].Name != "groceries.md" {
		t.Errorf("the question's attachments: %+v", cv.Messages)
	}
}
