// Package sse writes the Server-Sent Events frame of a turn's event: the
// one wire encoding shared by the runner, which builds each committed
// event's frame once for all its followers, and the api package.
package sse

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/toolmark/toolmark"
)

// AppendEvent appends the SSE frame of e to dst and returns the extended
// buffer and where e's data lies in it (frame[start:end] is e.Data). The
// frame is
//
//	id: <seq>
//	event: <type>
//	data: <the event as one line of JSON>
//
// followed by a blank line. The JSON is what json.Marshal(e) writes, built
// without reflection: e.Data is copied as it is and must be compact JSON as
// json.Marshal writes it (so it holds no newline and cannot end the frame
// early).
func AppendEvent(dst []byte, e toolmark.Event) (frame []byte, start, end int) {
	dst = slices.Grow(dst, EventSize(e))
	dst = append(dst, "id: "...)
	dst = strconv.AppendInt(dst, e.Seq, 10)
	dst = append(dst, "\nevent: "...)
	dst = append(dst, Name(e.Type)...)
	dst = append(dst, "\ndata: {\"seq\":"...)
	dst = strconv.AppendInt(dst, e.Seq, 10)
	dst = append(dst, `,"turnId":`...)
	dst = appendString(dst, e.TurnID)
	dst = append(dst, `,"messageId":`...)
	dst = appendString(dst, e.MessageID)
	dst = append(dst, `,"type":`...)
	dst = appendString(dst, string(e.Type))
	dst = append(dst, `,"time":"`...)
	dst = e.Time.AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `","data":`...)
	start = len(dst)
	if len(e.Data) == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, e.Data...)
	}
	end = len(dst)
	dst = append(dst, "}\n\n"...)
	return dst, start, end
}

// names maps every event type to the name its frames carry in toolmark's
// own stream (the SSE "event:" field): each type is written, under its own
// name. A test fails for a type without a row, so a new type is a decision
// of this protocol too.
var names = map[toolmark.EventType]string{
	toolmark.EventTurnQueued:      "turn_queued",
	toolmark.EventTurnStarted:     "turn_started",
	toolmark.EventRoundStarted:    "round_started",
	toolmark.EventTextDelta:       "text_delta",
	toolmark.EventToolCallStarted: "tool_call_started",
	toolmark.EventToolCallDelta:   "tool_call_delta",
	toolmark.EventToolCallRunning: "tool_call_running",
	toolmark.EventToolCallSuccess: "tool_call_success",
	toolmark.EventToolCallError:   "tool_call_error",
	toolmark.EventTodoUpdate:      "todo_update",
	toolmark.EventSubagentStatus:  "subagent_status",
	toolmark.EventSnapshot:        "snapshot",
	toolmark.EventModelRetry:      "model_retry",
	toolmark.EventUsage:           "usage",
	toolmark.EventTurnCompleted:   "turn_completed",
	toolmark.EventTurnFailed:      "turn_failed",
	toolmark.EventTurnCancelled:   "turn_cancelled",
	toolmark.EventReasoningDelta:  "reasoning_delta",
	toolmark.EventToolProgress:    "tool_progress",
}

// Name returns the SSE event name of type t: its row in names, or t itself
// for a type this version does not know (a newer replica's), which clients
// skip.
func Name(t toolmark.EventType) string {
	if n, ok := names[t]; ok {
		return n
	}
	return string(t)
}

// EventSize is the length of e's frame when its ids need no escaping (the
// most it can be with seqs of up to 20 digits and a time of up to 35 bytes);
// AppendEvent grows its buffer by that much at once.
func EventSize(e toolmark.Event) int {
	const fixed = len("id: \nevent: \ndata: {\"seq\":,\"turnId\":\"\",\"messageId\":\"\",\"type\":\"\",\"time\":\"\",\"data\":}\n\n")
	return fixed + 2*20 + 35 + 2*len(e.Type) + len(e.TurnID) + len(e.MessageID) + max(len(e.Data), len("null"))
}

// appendString appends s as a JSON string the way json.Marshal writes it.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// AppendComment appends an SSE comment line, which clients ignore and which
// keeps proxies from closing an idle stream.
func AppendComment(dst []byte, text string) []byte {
	dst = append(dst, ": "...)
	dst = append(dst, text...)
	return append(dst, "\n\n"...)
}
