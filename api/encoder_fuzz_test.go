package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/fanout"
)

// fuzzTurn makes a turn's frames of b: each byte one event (its type and
// which of three calls), the last a terminal event.
func fuzzTurn(b []byte) []fanout.Frame {
	var frames []fanout.Frame
	add := func(t toolmark.EventType, d any) {
		raw, _ := json.Marshal(d)
		frames = append(frames, fanout.NewFrame(toolmark.Event{Seq: int64(len(frames) + 1), TurnID: "t", MessageID: "m", Type: t, Time: time.Unix(0, 0), Data: raw}, d))
	}
	statuses := map[toolmark.EventType]string{toolmark.EventToolCallStarted: "pending", toolmark.EventToolCallDelta: "pending",
		toolmark.EventToolCallRunning: "running", toolmark.EventToolCallSuccess: "success", toolmark.EventToolCallError: "error"}
	calls := []toolmark.EventType{toolmark.EventToolCallStarted, toolmark.EventToolCallDelta, toolmark.EventToolCallRunning, toolmark.EventToolCallSuccess, toolmark.EventToolCallError}
	for i, c := range b {
		id := fmt.Sprintf("call/%d~", c>>4%3)
		switch k := c & 15; {
		case k == 0:
			add(toolmark.EventRoundStarted, toolmark.RoundStartedData{Round: i + 1})
		case k <= 2:
			add(toolmark.EventTextDelta, toolmark.TextDeltaData{Text: "<b>x</b>\n"})
		case k == 3:
			add(toolmark.EventReasoningDelta, toolmark.ReasoningDeltaData{Text: "hm"})
		case k <= 8:
			t := calls[k-4]
			add(t, toolmark.ToolCallData{ToolCallID: id, Name: "search", Status: statuses[t], Chunk: `{"q":`, Error: ""})
		case k == 9:
			add(toolmark.EventTodoUpdate, toolmark.TodoUpdateData{Todos: []toolmark.Todo{{Text: "a", Status: toolmark.TodoPending}}})
		case k == 10:
			add(toolmark.EventSnapshot, toolmark.SnapshotData{Content: "so far", ToolCalls: []toolmark.ToolCallRecord{{ID: id, Name: "search", Status: "running"}}})
		default:
			add(toolmark.EventSubagentStatus, toolmark.SubagentStatusData{ToolCallID: id, Phase: "round"})
		}
	}
	end := []toolmark.TurnStatus{toolmark.TurnCompleted, toolmark.TurnFailed, toolmark.TurnCancelled}[len(b)%3].EndEvent()
	add(end, toolmark.TurnEndData{Status: end.EndStatus()})
	return frames
}

// encodeAll encodes frames in batches of n with a fresh encoder of name.
func encodeAll(t *testing.T, name string, frames []fanout.Frame, n int) []map[string]any {
	enc := encoders[name](toolmark.Turn{ID: "t", ConversationID: "c", AssistantMessageID: "m"}, "r")
	var buf bytes.Buffer
	for i := 0; i < len(frames); i += n {
		if err := enc.write(&buf, frames[i:min(i+n, len(frames))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.end(&buf); err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(buf.String(), "\n") {
		line, ok := strings.CutPrefix(line, "data: ")
		if !ok || line == "[DONE]" {
			continue
		}
		var p map[string]any
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		out = append(out, p)
	}
	return out
}

// checkOrder checks a stream's parts: what opens closes, what continues
// was opened, nothing follows the end. opens, closes and continues map a
// part type to the field naming what it opens, closes or continues.
func checkOrder(t *testing.T, parts []map[string]any, first string, last map[string]bool, opens, continues, closes map[string]string) {
	t.Helper()
	if len(parts) == 0 || parts[0]["type"] != first || !last[parts[len(parts)-1]["type"].(string)] {
		t.Fatalf("parts %v do not start with %s and end with one of %v", parts, first, last)
	}
	open := map[string]bool{}
	for i, p := range parts {
		typ := p["type"].(string)
		if f, ok := opens[typ]; ok {
			key := f + ":" + fmt.Sprint(p[f])
			if open[key] {
				t.Fatalf("part %d %v opens %s again", i, p, key)
			}
			open[key] = true
		}
		if f, ok := continues[typ]; ok && !open[f+":"+fmt.Sprint(p[f])] {
			t.Fatalf("part %d %v continues what is not open", i, p)
		}
		if f, ok := closes[typ]; ok {
			if !open[f+":"+fmt.Sprint(p[f])] {
				t.Fatalf("part %d %v closes what is not open", i, p)
			}
			delete(open, f+":"+fmt.Sprint(p[f]))
		}
	}
	if len(open) > 0 {
		t.Fatalf("left open: %v", open)
	}
}

// FuzzProtocolEncoders feeds the AI SDK and AG-UI encoders any sequence of
// events, in batches of any size: their parts stay in the order the
// protocols' clients accept.
func FuzzProtocolEncoders(f *testing.F) {
	f.Add([]byte{0, 1, 4, 5, 6, 0, 1, 2}, uint8(1))
	f.Add([]byte{0, 3, 1, 0x14, 0x15, 4, 9, 10, 7, 0x18}, uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, n uint8) {
		frames := fuzzTurn(b)
		batch := int(n%8) + 1
		checkOrder(t, encodeAll(t, "ai-sdk", frames, batch), "start", map[string]bool{"finish": true, "abort": true},
			map[string]string{"text-start": "id", "reasoning-start": "id", "tool-input-start": "toolCallId", "start-step": "step"},
			map[string]string{"text-delta": "id", "reasoning-delta": "id", "tool-input-delta": "toolCallId", "tool-input-available": "toolCallId"},
			map[string]string{"text-end": "id", "reasoning-end": "id", "tool-output-available": "toolCallId", "tool-output-error": "toolCallId", "finish-step": "step"})
		checkOrder(t, encodeAll(t, "ag-ui", frames, batch), "RUN_STARTED", map[string]bool{"RUN_FINISHED": true, "RUN_ERROR": true},
			map[string]string{"TEXT_MESSAGE_START": "messageId", "REASONING_START": "messageId", "REASONING_MESSAGE_START": "messageId", "TOOL_CALL_START": "toolCallId", "STEP_STARTED": "stepName"},
			map[string]string{"TEXT_MESSAGE_CONTENT": "messageId", "REASONING_MESSAGE_CONTENT": "messageId", "TOOL_CALL_ARGS": "toolCallId"},
			map[string]string{"TEXT_MESSAGE_END": "messageId", "REASONING_MESSAGE_END": "messageId", "REASONING_END": "messageId", "TOOL_CALL_END": "toolCallId", "STEP_FINISHED": "stepName"})
	})
}
