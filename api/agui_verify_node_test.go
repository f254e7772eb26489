package api

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark/internal/harness/need"
)

// TestAGUIVerifierAcceptsEveryShape encodes turns of every shape the
// fuzz target makes — thinking between texts and calls, snapshots, calls
// left open, each ending — and has @ag-ui/core's schemas and
// @ag-ui/client's verifier check the events: none rejected. A cancelled
// turn's run finishes with the outcome "cancelled".
func TestAGUIVerifierAcceptsEveryShape(t *testing.T) {
	needAGUIClient(t)
	for _, b := range [][]byte{
		{0, 3, 3, 1, 2, 0x14, 3, 0x15, 6, 1, 7},      // thinking, text, thinking inside a round, calls
		{0, 1, 3, 4, 0x24, 9, 10, 3, 1, 8, 0, 3, 11}, // a snapshot, a plan, sub-agent status, thinking last
		{3, 1, 3},                   // thinking before any round; cancelled (len 3)
		{0, 4, 5, 3, 6, 3, 1, 0, 3}, // thinking while calls are open
		{},
	} {
		events := encodeAll(t, "ag-ui", fuzzTurn(b), 2)
		if errs := aguiVerify(t, events); len(errs) > 0 {
			t.Errorf("turn %v: %q\nevents %v", b, errs, events)
		}
		last := events[len(events)-1]
		cancelled := len(b)%3 == 2 // fuzzTurn's ending: completed, failed, cancelled
		if o, _ := last["outcome"].(map[string]any); cancelled != (o != nil && o["type"] == "cancelled") {
			t.Errorf("turn %v ends %v, cancelled %t", b, last, cancelled)
		}
	}
}

func needAGUIClient(t *testing.T) {
	t.Helper()
	need.NodePackage(t, "protocols", "@ag-ui/client", "scripts/need-protocols.sh")
}

// aguiVerify returns what @ag-ui/core's schemas and @ag-ui/client's
// verifier find wrong with events.
func aguiVerify(t *testing.T, events []map[string]any) []string {
	t.Helper()
	in, _ := json.Marshal(events)
	cmd := exec.Command("node", "ag-ui-verify.mjs")
	cmd.Dir = "protocols"
	cmd.Stdin = strings.NewReader(string(in))
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = 10 * time.Second
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("node ag-ui-verify.mjs: %v: %s", err, b)
	}
	var out struct{ Errors []string }
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return out.Errors
}
