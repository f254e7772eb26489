package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolmark/toolmark/internal/app"
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

// TestTUIAttachRefused: a message the server refuses (a 400: an image for
// a model that takes none) comes back to the composer with its files still
// attached; once another model is picked, the same message and file go.
func TestTUIAttachRefused(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{Models: []app.ModelConfig{
		{ID: "words", Label: "Words only", Provider: "demo", Default: true},
		{ID: "eyes", Label: "Eyes", Provider: "demo", Images: true},
	}})
	path := filepath.Join(t.TempDir(), "dot.png")
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00")
	if err := os.WriteFile(path, png, 0o600); err != nil {
		t.Fatal(err)
	}
	tm := startTerm(t, srv.URL, 140, 30)
	tm.waitText("/help")
	tm.typeLine("/attach " + path)
	tm.waitText("Attached to your next message: dot.png (image/png, 29 bytes).")
	tm.typeLine("What is in this picture?")
	tm.waitText(`is an image, and the model Words only does not take images — your message is back in the composer, its file still attached.`)
	tm.waitText("› What is in this picture?")
	tm.keys("C-c") // clears the line
	tm.waitFor("an empty composer", func(s string) bool { return !strings.Contains(s, "› What is in this picture?") })
	tm.typeLine("/model eyes")
	tm.waitText("The next answers come from Eyes.")
	tm.typeLine("What is in this picture?")
	tm.waitText("You attached")
	cv := onlyConversation(t, srv.URL)
	if len(cv.Messages) != 2 || len(cv.Messages[0].Attachments) != 1 || cv.Messages[0].Attachments[0].Name != "dot.png" || cv.Messages[1].Model != "eyes" {
		t.Errorf("the question's attachments and the answer's model: %+v", cv.Messages)
	}
}
