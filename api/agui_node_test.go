package api_test

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark/internal/harness/need"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// needAGUIClient skips the test (fails it under CI) when the test set-up
// has not installed @ag-ui/client; call it before starting anything that
// outlives a skip.
func needAGUIClient(t *testing.T) {
	t.Helper()
	need.NodePackage(t, "protocols", "@ag-ui/client", "scripts/need-protocols.sh")
}

// aguiRun runs one AG-UI run with @ag-ui/client's HttpAgent.
func aguiRun(t *testing.T, c *client, thread, run, question string) (out struct {
	State struct {
		Plan      []map[string]any             `json:"plan"`
		ToolCalls map[string]map[string]string `json:"toolCalls"`
	} `json:"state"`
	Messages []map[string]any `json:"messages"`
	Events   []string         `json:"events"`
	Outcome  string           `json:"outcome"`
	Errors   []string         `json:"errors"`
}) {
	t.Helper()
	dir := "protocols"
	needAGUIClient(t)
	cmd := exec.Command("node", "ag-ui-run.mjs", c.base, c.token, thread, run, question)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = 10 * time.Second
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("node ag-ui-run.mjs: %v: %s", err, b)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return out
}

// TestAGUIHttpAgentToolTurn runs a demo turn with tools through
// HttpAgent: no verifier error, the run finished, and its final state
// holds each call's final status; a second run with the same thread and
// run id streams the same run again.
func TestAGUIHttpAgentToolTurn(t *testing.T) {
	_, alice, bob := tokenServer(t)
	first := aguiRun(t, alice, "thread-1", "run-1", twoToolQuestion)
	if len(first.Errors) > 0 || len(first.Events) == 0 || first.Events[0] != "RUN_STARTED" || first.Events[len(first.Events)-1] != "RUN_FINISHED" {
		t.Fatalf("errors %q, events %q", first.Errors, first.Events)
	}
	if len(first.State.ToolCalls) < 2 {
		t.Fatalf("state %+v holds fewer than 2 calls", first.State)
	}
	for id, c := range first.State.ToolCalls {
		if s := c["status"]; s != "success" && s != "error" && s != "cancelled" {
			t.Errorf("call %s ended %q in the state", id, s)
		}
	}
	again := aguiRun(t, alice, "thread-1", "run-1", twoToolQuestion)
	if len(again.Errors) > 0 || len(again.Events) != len(first.Events) {
		t.Errorf("the reconnected run: errors %q, %d events, want %d", again.Errors, len(again.Events), len(first.Events))
	}
	// The same run id in another thread is another run, not thread-1's.
	lease := aguiRun(t, alice, "thread-2", "run-1", "What is a lease?")
	if len(lease.Errors) > 0 || !strings.Contains(lastAssistant(lease.Messages), "lease") {
		t.Errorf("run-1 of thread-2: errors %q, answer %q", lease.Errors, lastAssistant(lease.Messages))
	}
	other := aguiRun(t, bob, "thread-1", "run-2", twoToolQuestion)
	if len(other.Errors) == 0 {
		t.Errorf("bob ran in alice's thread: events %q", other.Events)
	}
}

// lastAssistant returns the text of the last assistant message of an AG-UI
// agent's messages.
func lastAssistant(msgs []map[string]any) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i]["role"] == "assistant" {
			text, _ := msgs[i]["content"].(string)
			return text
		}
	}
	return ""
}

// TestAGUIHttpAgentCancelledRun cancels a run half way (through the stop
// route of its thread, the conversation): HttpAgent sees the run finish
// with the outcome "cancelled", no verifier error, and its state holds
// every call final, the calls the cancel cut "cancelled".
func TestAGUIHttpAgentCancelledRun(t *testing.T) {
	needAGUIClient(t)
	_, alice, _ := tokenServerWith(t, testserver.Options{DemoDelay: 20 * time.Millisecond})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 500; i++ { // once the answer has a call (its content is saved at each call's change)
			time.Sleep(20 * time.Millisecond)
			if _, _, b := alice.do("GET", "/api/conversations/thread-stop", ""); !strings.Contains(string(b), "ToolCall type=") {
				continue
			}
			if st, _, _ := alice.do("POST", "/api/ai-sdk/chat/thread-stop/stop", ""); st == http.StatusAccepted {
				return
			}
		}
	}()
	out := aguiRun(t, alice, "thread-stop", "run-stop", twoToolQuestion)
	<-done
	if len(out.Errors) > 0 || out.Outcome != "cancelled" || out.Events[len(out.Events)-1] != "RUN_FINISHED" || len(out.State.ToolCalls) == 0 {
		t.Fatalf("errors %q, outcome %q, events %q", out.Errors, out.Outcome, out.Events)
	}
	for id, c := range out.State.ToolCalls {
		if s := c["status"]; s != "success" && s != "error" && s != "cancelled" {
			t.Errorf("call %s ended %q in the state", id, s)
		}
	}
}
