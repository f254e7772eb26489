package fakeprovider

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
)

// Reasoning models, and how their services refuse a request that drops or
// changes what the model must get back. Sources:
//
//   - DeepSeek, thinking mode (api-docs.deepseek.com/guides/thinking_mode,
//     "Tool Calls"): reasoning_content deltas before the answer; the
//     assistant message of a tool-calling turn must carry its
//     reasoning_content back, or the API answers 400 "Missing
//     `reasoning_content` field in the assistant message".
//   - Gemini 3 through its OpenAI compatibility
//     (ai.google.dev/gemini-api/docs/thought-signatures, "OpenAI
//     compatibility"): the first tool call of a step carries
//     extra_content.google.thought_signature, which must come back on the
//     call, or the API answers 400 "Function call is missing a
//     thought_signature"; errors come as a one-element array.
//   - Mistral (docs.mistral.ai, "Reasoning"; Magistral): content as an
//     array of thinking and text parts; the API refuses fields it does not
//     know, stream_options among them, with a 422 (extra_forbidden).
//   - Anthropic with extended thinking (docs.claude.com, "Building with
//     extended thinking", streaming): a thinking block (thinking_delta,
//     then signature_delta) and redacted_thinking blocks before the text
//     and the tool_use blocks; they must come back unchanged, before the
//     tool_use blocks, or the API answers 400 "Expected `thinking` or
//     `redacted_thinking`, but found `text`" / "Invalid `signature`".
//
// The fake services are stricter than the real ones in one way: they
// refuse an altered reasoning_content, and they check earlier turns as
// well as the current one.

// reasoning dialects stream thinking in every reply.
func (d Dialect) reasoning() bool {
	switch d {
	case DeepSeek, Gemini, Mistral, AnthropicThinking:
		return true
	}
	return false
}

// StreamsThinking reports whether replies of d stream thinking text
// (Gemini's only sign of thinking is its signatures).
func (d Dialect) StreamsThinking() bool { return d.reasoning() && d != Gemini }

// Anthropic reports whether d speaks Anthropic's messages API.
func (d Dialect) Anthropic() bool { return d == Anthropic || d == AnthropicThinking }

// thinkingOf is what a reply of dialect d thinks: its Thinking, or a
// default one for a reasoning dialect.
func thinkingOf(d Dialect, rep Reply) []string {
	if rep.Thinking != nil || !d.reasoning() || d == Gemini {
		return rep.Thinking
	}
	return []string{"The user asks about ", "resume; search first."}
}

// signature is the signature the fake model gives a piece of thinking.
func signature(text string) string {
	h := sha256.Sum256([]byte("sig:" + text))
	return "Eo" + base64.StdEncoding.EncodeToString(h[:18])
}

// redactedData is the data of a redacted_thinking block.
const redactedData = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB4URj"

// issued is what a reply gave the model to get back, by the ids of its
// tool calls.
type issued struct {
	reasoning string           // DeepSeek's reasoning_content
	signature string           // Gemini's signature of the call
	blocks    []map[string]any // Anthropic's thinking blocks of the reply
}

// issue records what rep gives back for its calls.
func (s *Server) issue(rep Reply) {
	if !s.Dialect.reasoning() || len(rep.Calls) == 0 {
		return
	}
	think := strings.Join(thinkingOf(s.Dialect, rep), "")
	var blocks []map[string]any
	if s.Dialect == AnthropicThinking {
		blocks = anthropicThinkingBlocks(rep)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.issued == nil {
		s.issued = map[string]issued{}
	}
	for i, c := range rep.Calls {
		is := issued{reasoning: think, blocks: blocks}
		if s.Dialect == Gemini && i == 0 {
			is.signature = signature(c.ID)
		}
		s.issued[c.ID] = is
	}
}

// anthropicThinkingBlocks are the thinking blocks of a reply, as they must
// come back.
func anthropicThinkingBlocks(rep Reply) []map[string]any {
	text := strings.Join(thinkingOf(AnthropicThinking, rep), "")
	out := []map[string]any{{"type": "thinking", "thinking": text, "signature": signature(text)}}
	if rep.Redacted {
		out = append(out, map[string]any{"type": "redacted_thinking", "data": redactedData})
	}
	return out
}

// validateReasoning checks that every assistant message gives back what
// the model wrote with its calls.
func (s *Server) validateReasoning(body map[string]any) (int, string, string) {
	if !s.Dialect.reasoning() {
		return 0, "", ""
	}
	if _, ok := body["stream_options"]; ok && s.Dialect == Mistral {
		return http.StatusUnprocessableEntity, "invalid_request_message_error", "Extra inputs are not permitted: body.stream_options"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	msgs, _ := body["messages"].([]any)
	for i, m := range msgs {
		mm, _ := m.(map[string]any)
		if mm["role"] != "assistant" {
			continue
		}
		var status int
		var typ, msg string
		switch s.Dialect {
		case DeepSeek:
			status, typ, msg = s.checkDeepSeek(i, mm)
		case Gemini:
			status, typ, msg = s.checkGemini(mm)
		case AnthropicThinking:
			status, typ, msg = s.checkAnthropic(i, mm)
		}
		if status != 0 {
			return status, typ, msg
		}
	}
	return 0, "", ""
}

func (s *Server) checkDeepSeek(i int, m map[string]any) (int, string, string) {
	calls, _ := m["tool_calls"].([]any)
	if len(calls) == 0 {
		return 0, "", ""
	}
	rc, ok := m["reasoning_content"].(string)
	if !ok {
		return http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("Missing `reasoning_content` field in the assistant message at message index %d. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls", i)
	}
	for _, c := range calls {
		id, _ := c.(map[string]any)["id"].(string)
		if is, ok := s.issued[id]; ok && !strings.Contains(rc, is.reasoning) {
			return http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("The `reasoning_content` of the assistant message at message index %d is not what the model wrote (test service)", i)
		}
	}
	return 0, "", ""
}

func (s *Server) checkGemini(m map[string]any) (int, string, string) {
	calls, _ := m["tool_calls"].([]any)
	for k, c := range calls {
		cm, _ := c.(map[string]any)
		id, _ := cm["id"].(string)
		is, ok := s.issued[id]
		if !ok || is.signature == "" {
			continue
		}
		ex, _ := cm["extra_content"].(map[string]any)
		g, _ := ex["google"].(map[string]any)
		sig, _ := g["thought_signature"].(string)
		name, _ := cm["function"].(map[string]any)["name"].(string)
		switch {
		case sig == "":
			return http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:%s` , position %d. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", name, k+1)
		case sig != is.signature:
			return http.StatusBadRequest, "INVALID_ARGUMENT", "Corrupted thought signature."
		}
	}
	return 0, "", ""
}

func (s *Server) checkAnthropic(i int, m map[string]any) (int, string, string) {
	blocks, _ := m["content"].([]any)
	var want []map[string]any
	seen := map[string]bool{}
	for _, b := range blocks {
		bm, _ := b.(map[string]any)
		id, _ := bm["id"].(string)
		if is, ok := s.issued[id]; ok && bm["type"] == "tool_use" && !seen[fmt.Sprint(is.blocks)] {
			seen[fmt.Sprint(is.blocks)] = true
			want = append(want, is.blocks...)
		}
	}
	if len(want) == 0 {
		return 0, "", ""
	}
	var have []map[string]any
	for _, b := range blocks {
		bm, _ := b.(map[string]any)
		if bm["type"] != "thinking" && bm["type"] != "redacted_thinking" {
			break
		}
		have = append(have, bm)
	}
	if len(have) == 0 {
		first, _ := blocks[0].(map[string]any)
		return http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%v`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns.", i, first["type"])
	}
	for j, h := range have { // each block as the model wrote it
		switch text, _ := h["thinking"].(string); {
		case h["type"] == "thinking" && h["signature"] != signature(text):
			return http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("messages.%d.content.%d: Invalid `signature` in `thinking` block", i, j)
		case h["type"] == "redacted_thinking" && h["data"] != redactedData:
			return http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("messages.%d.content.%d: Invalid `data` in `redacted_thinking` block", i, j)
		}
	}
	k := 0 // and those of the calls' replies among them, in order
	for _, h := range have {
		if k < len(want) && fmt.Sprint(h) == fmt.Sprint(want[k]) {
			k++
		}
	}
	if k < len(want) {
		return http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("messages.%d.content: a thinking block of the model's reply is missing (test service)", i)
	}
	return 0, "", ""
}
