package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/internal/app"
	"github.com/toolmark/toolmark/internal/harness/testserver"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// runChat runs toolmark chat to its end and returns its exit code.
func runChat(t *testing.T, url, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, out, errOut := chatCmd(ctx, t, url, args...)
	cmd.Stdin = strings.NewReader(stdin)
	err := cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("running toolmark chat: %v", err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// TestChatJSON: --json writes each event of the turn as one line of JSON,
// seq 1 to the end without a gap, and nothing else.
func TestChatJSON(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	code, out, stderr := runChat(t, srv.URL, "", "--json", "-m", "What is a snapshot?")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	types := map[toolmark.EventType]int{}
	for i, l := range lines {
		var ev toolmark.Event
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("line %d is not an event: %v\n%s", i+1, err, l)
		}
		if ev.Seq != int64(i+1) {
			t.Errorf("line %d has seq %d", i+1, ev.Seq)
		}
		types[ev.Type]++
	}
	for _, want := range []toolmark.EventType{toolmark.EventTurnStarted, toolmark.EventToolCallStarted,
		toolmark.EventToolCallDelta, toolmark.EventToolCallSuccess, toolmark.EventTextDelta, toolmark.EventTurnCompleted} {
		if types[want] == 0 {
			t.Errorf("no %s event in\n%s", want, out)
		}
	}
	var last toolmark.Event
	json.Unmarshal([]byte(lines[len(lines)-1]), &last)
	if last.Type != toolmark.EventTurnCompleted {
		t.Errorf("last event %s", last.Type)
	}
}

// TestChatQuietAndStdin: -m - reads the message from standard input, and
// --quiet prints the answer's text and nothing else.
func TestChatQuietAndStdin(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	code, out, stderr := runChat(t, srv.URL, "What is a ToolCall tag?\n", "--quiet", "-m", "-")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	ctx := context.Background()
	c := client.New(srv.URL)
	convs, _ := c.ListConversations(ctx)
	conv, err := c.GetConversation(ctx, convs[0].ID)
	if err != nil || len(conv.Messages) != 2 {
		t.Fatalf("%v, %d messages", err, len(conv.Messages))
	}
	if got := conv.Messages[0].Content; got != "What is a ToolCall tag?" {
		t.Errorf("sent %q", got)
	}
	want := toolcallmarkup.Text(conv.Messages[1].Content)
	if strings.Trim(out, "\n") != strings.Trim(want, "\n") {
		t.Errorf("--quiet printed\n%q\nwant the answer\n%q", out, want)
	}
	if strings.ContainsAny(out, "✓⠋") {
		t.Errorf("--quiet printed status lines:\n%s", out)
	}
}

// TestChatExitCodes: each outcome has its own exit code.
func TestChatExitCodes(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	slow := testserver.Start(t, testserver.Options{DemoDelay: 100 * time.Millisecond})
	tokenSrv := testserver.Start(t, testserver.Options{Auth: "token"})
	badModel := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"message":"the model refuses","type":"invalid_request_error"}}`)
	}))
	defer badModel.Close()
	failing := testserver.Start(t, testserver.Options{Model: &app.ModelConfig{Provider: "openai", BaseURL: badModel.URL + "/v1", APIKey: "k", Name: "m"}})
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	t.Run("success", func(t *testing.T) {
		if code, _, stderr := runChat(t, srv.URL, "", "-m", "What is a snapshot?"); code != 0 {
			t.Errorf("exit %d, want 0\n%s", code, stderr)
		}
	})
	t.Run("turn failed", func(t *testing.T) {
		code, _, stderr := runChat(t, failing.URL, "", "-m", "What is a snapshot?")
		if code != 1 || !strings.Contains(stderr, "failed") {
			t.Errorf("exit %d, want 1\n%s", code, stderr)
		}
	})
	t.Run("usage", func(t *testing.T) {
		for _, args := range [][]string{{"--json", "--quiet", "-m", "x"}, {"-m", "-"}, {"--no-such-flag"}, {"-m", "x", "y"}} {
			if code, _, stderr := runChat(t, srv.URL, "", args...); code != 2 {
				t.Errorf("%q: exit %d, want 2\n%s", args, code, stderr)
			}
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		c := client.New(slow.URL)
		go func() {
			id := activeTurn(t, c)
			c.CancelTurn(context.Background(), id)
		}()
		code, _, stderr := runChat(t, slow.URL, "", "-m", "Compare resuming with cancelling, and explain snapshots.")
		if code != 3 || !strings.Contains(stderr, "Answer cancelled") {
			t.Errorf("exit %d, want 3\n%s", code, stderr)
		}
	})
	t.Run("auth", func(t *testing.T) {
		if code, _, stderr := runChat(t, tokenSrv.URL, "", "-m", "hello"); code != 4 {
			t.Errorf("exit %d, want 4\n%s", code, stderr)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		if code, _, stderr := runChat(t, closed.URL, "", "-m", "hello"); code != 5 {
			t.Errorf("exit %d, want 5\n%s", code, stderr)
		}
	})
}
