package api_test

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolmark/toolmark/internal/harness/need"
)

// TestAISDKReadUIMessageStream reads a demo turn with tools through the
// `ai` package's DefaultChatTransport, which validates every part against
// the SDK's schema, and readUIMessageStream: one assistant UIMessage whose
// text is the stored answer and whose tool parts all end output-available
// or output-error, and no error.
func TestAISDKReadUIMessageStream(t *testing.T) {
	dir := filepath.Join("protocols")
	need.NodePackage(t, dir, "ai", "scripts/need-protocols.sh")
	_, alice, _ := tokenServer(t)
	cmd := exec.Command("node", "ai-sdk-read.mjs", alice.base, alice.token, "chat-node", twoToolQuestion)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node ai-sdk-read.mjs: %v: %s", err, out)
	}
	var got struct {
		IDs     []string `json:"ids"`
		Message struct {
			ID    string           `json:"id"`
			Role  string           `json:"role"`
			Parts []map[string]any `json:"parts"`
		} `json:"message"`
		Errors []string `json:"errors"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for i, e := range got.Errors {
		got.Errors[i] = e[:min(len(e), 400)] // the schema's whole union follows
	}
	if len(got.Errors) > 0 || len(got.IDs) != 1 || got.Message.Role != "assistant" {
		t.Fatalf("errors %q, message ids %q, role %q", got.Errors, got.IDs, got.Message.Role)
	}
	var text string
	tools := 0
	for _, p := range got.Message.Parts {
		typ, _ := p["type"].(string)
		switch {
		case typ == "text":
			text += p["text"].(string)
		case len(typ) > 5 && typ[:5] == "tool-":
			tools++
			if st := p["state"]; st != "output-available" && st != "output-error" {
				t.Errorf("tool part %v ended %v", p["toolCallId"], st)
			}
		}
	}
	var history []struct {
		ID    string           `json:"id"`
		Parts []map[string]any `json:"parts"`
	}
	alice.mustJSON("GET", "/api/ai-sdk/chat/chat-node", "", http.StatusOK, &history)
	if len(history) != 2 || history[1].ID != got.Message.ID {
		t.Fatalf("history %+v, streamed message %s", history, got.Message.ID)
	}
	var stored string
	for _, p := range history[1].Parts {
		if p["type"] == "text" {
			stored += p["text"].(string)
		}
	}
	if tools < 2 || text == "" || text != stored {
		t.Errorf("%d tool parts; text %q, stored answer %q", tools, text, stored)
	}
}
