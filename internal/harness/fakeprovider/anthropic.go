package fakeprovider

import (
	"fmt"
	"net/http"
	"strings"
)

// Anthropic's messages stream, in the shapes of the API's streaming
// documentation ("Streaming Messages": message_start, content_block_start,
// ping, content_block_delta with text_delta and input_json_delta,
// content_block_stop, message_delta with stop_reason and the output
// usage, message_stop; an error event) and of the Vercel AI SDK's recorded
// Anthropic chunks (packages/anthropic). Its validation follows the API's
// 400 answers for tool_use and tool_result blocks.

func event(name string, data any) string {
	return "event: " + name + "\ndata: " + mustJSON(data) + "\n\n"
}

// anthropicStream renders a reply as a messages stream.
func anthropicStream(d Dialect, rep Reply) []string {
	out := []string{event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant", "content": []any{},
		"model": "claude-sonnet-4-5-20250929", "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": rep.Input, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1}}})}
	if rep.StreamErr != "" && rep.ErrFirst {
		return append(out, anthropicError(rep.StreamErr))
	}
	out = append(out, event("ping", map[string]any{"type": "ping"}))
	idx := 0
	if d == AnthropicThinking || rep.Thinking != nil {
		var think []string
		think, idx = anthropicThinking(rep)
		out = append(out, think...)
	}
	if len(rep.Text) > 0 {
		out = append(out, event("content_block_start", map[string]any{"type": "content_block_start", "index": idx,
			"content_block": map[string]any{"type": "text", "text": ""}}))
		for _, t := range rep.Text {
			out = append(out, event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
				"delta": map[string]any{"type": "text_delta", "text": t}}))
		}
		if rep.Malformed {
			return append(out, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_del\n\n")
		}
		if rep.StreamErr != "" {
			return append(out, anthropicError(rep.StreamErr))
		}
		out = append(out, event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx}))
		idx++
	}
	for i, c := range rep.Calls {
		out = append(out, event("content_block_start", map[string]any{"type": "content_block_start", "index": idx,
			"content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}}))
		args := c.Args
		if rep.Whole {
			args = []string{strings.Join(c.Args, "")}
		}
		out = append(out, event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": ""}}))
		for k, a := range args {
			if rep.Cut && i == len(rep.Calls)-1 && k == len(args)-1 {
				a = a[:len(a)/2]
				return append(out, event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": a}}))
			}
			out = append(out, event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": a}}))
		}
		out = append(out, event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx}))
		idx++
	}
	stop := "end_turn"
	if len(rep.Calls) > 0 {
		stop = "tool_use"
	}
	if rep.Stop != "" {
		stop = rep.Stop
	}
	out = append(out, event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": rep.Output}}))
	if !rep.NoDone {
		out = append(out, event("message_stop", map[string]any{"type": "message_stop"}))
	}
	return out
}

func anthropicError(kind string) string {
	typ, msg := "api_error", "Internal server error"
	switch kind {
	case "overloaded":
		typ, msg = "overloaded_error", "Overloaded"
	case "rate_limit":
		typ, msg = "rate_limit_error", "Rate limited"
	}
	return event("error", map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}

// validateAnthropic checks a messages request as the API does.
func validateAnthropic(r *http.Request, body map[string]any) (int, string, string) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		return http.StatusNotFound, "not_found_error", "Not found"
	}
	if r.Header.Get("X-Api-Key") != APIKey {
		return http.StatusUnauthorized, "authentication_error", "invalid x-api-key"
	}
	if r.Header.Get("Anthropic-Version") == "" {
		return http.StatusBadRequest, "invalid_request_error", "anthropic-version: header is required"
	}
	if n, _ := body["max_tokens"].(float64); n <= 0 {
		return http.StatusBadRequest, "invalid_request_error", "max_tokens: Field required"
	}
	if stream, _ := body["stream"].(bool); !stream {
		return http.StatusBadRequest, "invalid_request_error", "this test service only streams: stream must be true"
	}
	msgs, _ := body["messages"].([]any)
	if len(msgs) == 0 {
		return http.StatusBadRequest, "invalid_request_error", "messages: at least one message is required"
	}
	var prevRole string
	var prevUses []string // tool_use ids of the previous assistant message
	for i, m := range msgs {
		mm, _ := m.(map[string]any)
		role, _ := mm["role"].(string)
		if i == 0 && role != "user" {
			return http.StatusBadRequest, "invalid_request_error", "messages: first message must use the \"user\" role"
		}
		if role == prevRole {
			return http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("messages: roles must alternate between \"user\" and \"assistant\", but found multiple %q roles in a row", role)
		}
		blocks, _ := mm["content"].([]any)
		var uses, results []string
		for j, b := range blocks {
			bm, _ := b.(map[string]any)
			switch bm["type"] {
			case "text":
				if t, _ := bm["text"].(string); strings.TrimSpace(t) == "" {
					return http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("messages.%d.content.%d.text: text content blocks must contain non-whitespace text", i, j)
				}
			case "image", "document":
				if st, typ, msg := validateAnthropicSource(i, j, role, bm); st != 0 {
					return st, typ, msg
				}
			case "tool_use":
				id, _ := bm["id"].(string)
				uses = append(uses, id)
			case "tool_result":
				id, _ := bm["tool_use_id"].(string)
				if indexOf(prevUses, id) < 0 {
					return http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, id)
				}
				results = append(results, id)
			}
		}
		if role == "user" && len(prevUses) > 0 {
			var missing []string
			for _, id := range prevUses {
				if indexOf(results, id) < 0 {
					missing = append(missing, id)
				}
			}
			if len(missing) > 0 {
				return http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, strings.Join(missing, ", "))
			}
		}
		prevRole, prevUses = role, nil
		if role == "assistant" {
			prevUses = uses
		}
	}
	if len(prevUses) > 0 {
		return http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", len(msgs)-1, strings.Join(prevUses, ", "))
	}
	return 0, "", ""
}

// anthropicThinking renders the thinking blocks of a reply: a thinking
// block streamed in thinking_delta events and closed by its
// signature_delta, then a redacted_thinking block whole; it returns the
// index of the next block.
func anthropicThinking(rep Reply) ([]string, int) {
	var out []string
	idx := 0
	for _, b := range anthropicThinkingBlocks(rep) {
		if b["type"] == "redacted_thinking" {
			out = append(out, event("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": b}))
		} else {
			out = append(out, event("content_block_start", map[string]any{"type": "content_block_start", "index": idx,
				"content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}}))
			for _, t := range thinkingOf(AnthropicThinking, rep) {
				out = append(out, event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
					"delta": map[string]any{"type": "thinking_delta", "thinking": t}}))
			}
			out = append(out, event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
				"delta": map[string]any{"type": "signature_delta", "signature": b["signature"]}}))
		}
		out = append(out, event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx}))
		idx++
	}
	return out, idx
}
