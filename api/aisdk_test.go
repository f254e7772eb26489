package api_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// readAISDKParts reads a UI message stream's parts up to data: [DONE].
func readAISDKParts(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var parts []map[string]any
	done := false
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if done {
			t.Fatalf("data after [DONE]: %s", line)
		}
		if line == "[DONE]" {
			done = true
			continue
		}
		var p map[string]any
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("part %q: %v", line, err)
		}
		parts = append(parts, p)
	}
	if !done {
		t.Fatal("the stream did not end with data: [DONE]")
	}
	return parts
}

// TestAISDKChatToolTurn runs a demo turn with tools through the AI SDK
// route and checks the parts: one message, every block and call opened
// and closed in order, the text that of the stored answer; then the
// history, the resume of a finished chat and another user's access.
func TestAISDKChatToolTurn(t *testing.T) {
	_, alice, bob := tokenServer(t)
	body := `{"id":"chat-1","trigger":"submit-message","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":` +
		string(must(json.Marshal(twoToolQuestion))) + `}]}]}`
	st, h, b := alice.do("POST", "/api/ai-sdk/chat", body)
	if st != http.StatusOK || h.Get("x-vercel-ai-ui-message-stream") != "v1" {
		t.Fatalf("POST /api/ai-sdk/chat = %d %v: %s", st, h, b)
	}
	parts := readAISDKParts(t, b)
	if parts[0]["type"] != "start" || parts[len(parts)-1]["type"] != "finish" {
		t.Fatalf("parts start with %v and end with %v", parts[0], parts[len(parts)-1])
	}
	var text strings.Builder
	open, calls := map[string]bool{}, map[string]string{}
	step := false
	for _, p := range parts {
		typ, _ := p["type"].(string)
		id, _ := p["id"].(string)
		call, _ := p["toolCallId"].(string)
		switch typ {
		case "start-step", "finish-step":
			if step == (typ == "start-step") {
				t.Fatalf("%s with a step open=%v", typ, step)
			}
			step = typ == "start-step"
		case "text-start", "reasoning-start":
			open[id] = true
		case "text-delta", "reasoning-delta":
			if !open[id] {
				t.Fatalf("%s of block %q not open", typ, id)
			}
			if typ == "text-delta" {
				text.WriteString(p["delta"].(string))
			}
		case "text-end", "reasoning-end":
			delete(open, id)
		case "tool-input-start":
			calls[call] = "input-streaming"
		case "tool-input-delta":
			if calls[call] != "input-streaming" {
				t.Fatalf("tool-input-delta of %q in state %q", call, calls[call])
			}
		case "tool-input-available":
			calls[call] = "input-available"
		case "tool-output-available", "tool-output-error":
			if calls[call] != "input-available" {
				t.Fatalf("%s of %q in state %q", typ, call, calls[call])
			}
			calls[call] = "final"
		}
	}
	if len(open) > 0 || step || len(calls) < 2 {
		t.Fatalf("blocks left open %v, step open %v, calls %v", open, step, calls)
	}
	for id, s := range calls {
		if s != "final" {
			t.Errorf("call %s ended %s", id, s)
		}
	}
	var history []struct {
		ID    string           `json:"id"`
		Role  string           `json:"role"`
		Parts []map[string]any `json:"parts"`
	}
	alice.mustJSON("GET", "/api/ai-sdk/chat/chat-1", "", http.StatusOK, &history)
	if len(history) != 2 || history[1].Role != "assistant" || history[1].ID != parts[0]["messageId"] {
		t.Fatalf("history %+v, stream's message %v", history, parts[0]["messageId"])
	}
	var stored string
	tools := 0
	for _, p := range history[1].Parts {
		if p["type"] == "text" {
			stored += p["text"].(string)
		} else if st := p["state"]; st == "output-available" || st == "output-error" {
			tools++
		} else {
			t.Errorf("history part %v is not final", p)
		}
	}
	if stored == "" || stored != text.String() || tools != len(calls) {
		t.Errorf("streamed text %q, stored %q; %d calls streamed, %d stored", text.String(), stored, len(calls), tools)
	}
	if st, _, _ := alice.do("GET", "/api/ai-sdk/chat/chat-1/stream", ""); st != http.StatusNoContent {
		t.Errorf("resume of a chat without an active turn = %d, want 204", st)
	}
	for _, req := range [][2]string{{"GET", "/api/ai-sdk/chat/chat-1"}, {"GET", "/api/ai-sdk/chat/chat-1/stream"}, {"POST", "/api/ai-sdk/chat/chat-1/stop"}} {
		if st, _, _ := bob.do(req[0], req[1], ""); st != http.StatusNotFound {
			t.Errorf("bob's %s %s = %d, want 404", req[0], req[1], st)
		}
	}
	if st, _, _ := bob.do("POST", "/api/ai-sdk/chat", body); st != http.StatusNotFound {
		t.Errorf("bob posting to alice's chat = %d, want 404", st)
	}
}
