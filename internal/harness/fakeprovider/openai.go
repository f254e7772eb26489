package fakeprovider

import (
	"encoding/json"
	"net/http"
	"strings"
)

// The chat-completions dialects. Shapes of the chunks, by source:
//
//   - OpenAI: openai/openai-python's recorded streams (tests/lib/chat,
//     ChatCompletionChunk with system_fingerprint, logprobs, usage null and
//     a last usage-only chunk with "choices": [] when stream_options asks
//     for it) and langchaingo's llms/openai recorded streams.
//   - Azure OpenAI: the same chunks with content_filter_results, after a
//     first chunk with "choices": [] and prompt_filter_results (Vercel AI
//     SDK packages/azure, recorded chunks); deployments path with
//     api-version, api-key header.
//   - Ollama (openai/openai.go of ollama/ollama): fp_ollama, role repeated
//     in every delta, each tool call whole in one chunk with its index;
//     before streamed tool calls, one chat.completion JSON answer.
//   - vLLM (vllm/entrypoints/openai/serving_chat.py): the first delta of a
//     call has id, type, index and the name without "arguments", then
//     arguments only; finish chunks carry stop_reason; errors are
//     {"object":"error",…}.
//   - llama.cpp (tools/server of ggml-org/llama.cpp): role with content
//     null first, the usage and timings in the finish chunk itself.

// chunk is one data: frame of a chat-completions stream.
func chunk(d Dialect, delta map[string]any, finish any) string {
	choice := map[string]any{"index": 0, "delta": delta, "finish_reason": finish}
	var c map[string]any
	switch d {
	case Azure:
		choice["logprobs"] = nil
		if finish == nil {
			choice["content_filter_results"] = map[string]any{}
		}
		c = map[string]any{"id": "chatcmpl-AzF1", "object": "chat.completion.chunk", "created": 1732000000,
			"model": "gpt-4o-mini-2024-07-18", "system_fingerprint": "fp_04751d0b65", "choices": []any{choice}}
	case Ollama:
		if _, ok := delta["role"]; !ok {
			delta["role"] = "assistant"
		}
		if _, ok := delta["content"]; !ok {
			delta["content"] = ""
		}
		c = map[string]any{"id": "chatcmpl-412", "object": "chat.completion.chunk", "created": 1732000000,
			"model": "llama3.2", "system_fingerprint": "fp_ollama", "choices": []any{choice}}
	case VLLM:
		choice["logprobs"], choice["stop_reason"] = nil, nil
		c = map[string]any{"id": "chatcmpl-8d3f1c", "object": "chat.completion.chunk", "created": 1732000000,
			"model": "Qwen/Qwen2.5-7B-Instruct", "choices": []any{choice}}
	case LlamaCpp:
		c = map[string]any{"choices": []any{choice}, "created": 1732000000, "id": "chatcmpl-Lk1x", "model": "gpt-3.5-turbo",
			"system_fingerprint": "b5120-1a2b3c4d", "object": "chat.completion.chunk"}
	default:
		choice["logprobs"] = nil
		c = map[string]any{"id": "chatcmpl-AB1cd", "object": "chat.completion.chunk", "created": 1732000000,
			"model": "gpt-4o-mini-2024-07-18", "system_fingerprint": "fp_0ba0d124f1", "choices": []any{choice}, "usage": nil}
	}
	return frame(c)
}

func frame(v any) string { return "data: " + mustJSON(v) + "\n\n" }

func usageOf(rep Reply) map[string]any {
	return map[string]any{"prompt_tokens": rep.Input, "completion_tokens": rep.Output, "total_tokens": rep.Input + rep.Output}
}

// openAIStream renders a reply as a chat-completions stream.
func openAIStream(d Dialect, rep Reply, includeUsage bool) []string {
	var out []string
	if d == Azure {
		out = append(out, frame(map[string]any{"choices": []any{}, "created": 0, "id": "", "model": "", "object": "",
			"prompt_filter_results": []any{map[string]any{"prompt_index": 0, "content_filter_results": map[string]any{
				"hate": map[string]any{"filtered": false, "severity": "safe"}}}}}))
	}
	if rep.StreamErr != "" && rep.ErrFirst {
		return append(out, streamError(d, rep.StreamErr))
	}
	switch d {
	case LlamaCpp:
		out = append(out, chunk(d, map[string]any{"role": "assistant", "content": nil}, nil))
	case Ollama:
	case OpenAI, Azure:
		out = append(out, chunk(d, map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil))
	default:
		out = append(out, chunk(d, map[string]any{"role": "assistant", "content": ""}, nil))
	}
	out = append(out, thinkingChunks(d, rep)...)
	for _, t := range rep.Text {
		if d == Mistral {
			out = append(out, chunk(d, map[string]any{"content": []any{map[string]any{"type": "text", "text": t}}}, nil))
			continue
		}
		out = append(out, chunk(d, map[string]any{"content": t}, nil))
	}
	if rep.Malformed {
		return append(out, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tru\n\n")
	}
	if rep.StreamErr != "" {
		return append(out, streamError(d, rep.StreamErr))
	}
	calls, cut := callChunks(d, rep)
	out = append(out, calls...)
	if cut {
		return out
	}
	finish := "stop"
	if len(rep.Calls) > 0 {
		finish = "tool_calls"
	}
	if rep.Stop != "" {
		finish = rep.Stop
	}
	end := map[string]any{}
	switch d {
	case VLLM:
		end["content"] = ""
	case LlamaCpp:
		var c map[string]any
		_ = json.Unmarshal([]byte(strings.TrimPrefix(strings.TrimSpace(chunk(d, end, finish)), "data: ")), &c)
		c["usage"] = usageOf(rep)
		c["timings"] = map[string]any{"prompt_n": rep.Input, "predicted_n": rep.Output, "predicted_per_second": 41.7}
		out = append(out, frame(c))
	}
	if d == Mistral { // the usage in the finish chunk, unasked
		var c map[string]any
		_ = json.Unmarshal([]byte(strings.TrimPrefix(strings.TrimSpace(chunk(d, end, finish)), "data: ")), &c)
		c["usage"] = usageOf(rep)
		out = append(out, frame(c))
	} else if d != LlamaCpp {
		out = append(out, chunk(d, end, finish))
		if includeUsage {
			u := map[string]any{"id": "chatcmpl-AB1cd", "object": "chat.completion.chunk", "created": 1732000000,
				"model": "gpt-4o-mini-2024-07-18", "choices": []any{}, "usage": usageOf(rep)}
			out = append(out, frame(u))
		}
	}
	if !rep.NoDone {
		out = append(out, "data: [DONE]\n\n")
	}
	return out
}

// callChunks renders the tool calls of a reply; cut reports that the body
// ends inside the last call's arguments.
func callChunks(d Dialect, rep Reply) (out []string, cut bool) {
	tc := func(m map[string]any) string {
		return chunk(d, map[string]any{"tool_calls": []any{m}}, nil)
	}
	if rep.Whole || d == Ollama {
		for i, c := range rep.Calls {
			m := map[string]any{"id": c.ID, "index": i, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": strings.Join(c.Args, "")}}
			if d == Gemini && i == 0 {
				m["extra_content"] = map[string]any{"google": map[string]any{"thought_signature": signature(c.ID)}}
			}
			f := tc(m)
			if rep.Cut && i == len(rep.Calls)-1 {
				return append(out, f[:len(f)/2]), true // the body ends inside the chunk
			}
			out = append(out, f)
		}
		return out, false
	}
	start := func(i int, c Call) string {
		if d == Gemini && i == 0 {
			return tc(map[string]any{"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": ""},
				"extra_content": map[string]any{"google": map[string]any{"thought_signature": signature(c.ID)}}})
		}
		if d == VLLM {
			return tc(map[string]any{"id": c.ID, "type": "function", "index": i, "function": map[string]any{"name": c.Name}})
		}
		return tc(map[string]any{"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": ""}})
	}
	arg := func(i int, a string) string {
		return tc(map[string]any{"index": i, "function": map[string]any{"arguments": a}})
	}
	if rep.Interleave {
		for i, c := range rep.Calls {
			out = append(out, start(i, c))
		}
		for k := 0; ; k++ {
			more := false
			for i, c := range rep.Calls {
				if k < len(c.Args) {
					out, more = append(out, arg(i, c.Args[k])), true
				}
			}
			if !more {
				return out, false
			}
		}
	}
	for i, c := range rep.Calls {
		out = append(out, start(i, c))
		for k, a := range c.Args {
			if rep.Cut && i == len(rep.Calls)-1 && k == len(c.Args)-1 {
				return append(out, arg(i, a[:len(a)/2])), true
			}
			out = append(out, arg(i, a))
		}
	}
	return out, false
}

// streamError is an error inside a chat-completions stream.
func streamError(d Dialect, kind string) string {
	typ, msg := "server_error", "The server had an error while processing your request. Sorry about that!"
	switch kind {
	case "overloaded":
		msg = "The engine is currently overloaded, please try again later"
	case "rate_limit":
		typ, msg = "rate_limit_exceeded", "Rate limit reached for requests"
	}
	switch d {
	case VLLM:
		return frame(map[string]any{"object": "error", "message": msg, "type": typ, "param": nil, "code": 500})
	case LlamaCpp:
		return frame(map[string]any{"error": map[string]any{"code": 500, "message": msg, "type": typ}})
	}
	return frame(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
}

// ollamaLegacyWhole is the one JSON answer an Ollama that could not stream
// with tools sent.
func ollamaLegacyWhole(rep Reply) string {
	msg := map[string]any{"role": "assistant", "content": strings.Join(rep.Text, "")}
	finish := "stop"
	if len(rep.Calls) > 0 {
		var calls []any
		for _, c := range rep.Calls {
			calls = append(calls, map[string]any{"id": c.ID, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": strings.Join(c.Args, "")}})
		}
		msg["tool_calls"], finish = calls, "tool_calls"
	}
	if rep.Stop != "" {
		finish = rep.Stop
	}
	return mustJSON(map[string]any{"id": "chatcmpl-97", "object": "chat.completion", "created": 1732000000, "model": "llama3.1",
		"system_fingerprint": "fp_ollama", "choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage": usageOf(rep)})
}

// validateOpenAI checks a chat-completions request as the services do.
func validateOpenAI(d Dialect, r *http.Request, body map[string]any) (int, string, string) {
	path := "/v1/chat/completions"
	if d == Azure {
		path = "/openai/deployments/" + Deployment + "/chat/completions"
		if r.URL.Query().Get("api-version") == "" {
			return http.StatusNotFound, "404", "Resource not found"
		}
		if r.Header.Get("Api-Key") != APIKey {
			return http.StatusUnauthorized, "401", "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."
		}
	}
	if r.Method != http.MethodPost || r.URL.Path != path {
		return http.StatusNotFound, "invalid_request_error", "Unknown request URL: " + r.Method + " " + r.URL.Path
	}
	if d == OpenAI && r.Header.Get("Authorization") != "Bearer "+APIKey {
		return http.StatusUnauthorized, "invalid_request_error", "Incorrect API key provided."
	}
	if stream, _ := body["stream"].(bool); !stream {
		return http.StatusBadRequest, "invalid_request_error", "this test service only streams: 'stream' must be true"
	}
	if tools, ok := body["tools"].([]any); ok {
		for i, t := range tools {
			tm, _ := t.(map[string]any)
			f, _ := tm["function"].(map[string]any)
			if tm["type"] != "function" || f == nil || f["name"] == "" {
				return http.StatusBadRequest, "invalid_request_error", "Invalid 'tools[" + itoa(i) + "]': a function tool needs a name."
			}
		}
	}
	msgs, _ := body["messages"].([]any)
	if len(msgs) == 0 {
		return http.StatusBadRequest, "invalid_request_error", "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead."
	}
	for i, m := range msgs {
		mm, _ := m.(map[string]any)
		if st, typ, msg := validateOpenAIParts(i, mm); st != 0 {
			return st, typ, msg
		}
	}
	return validateToolPairs(d, msgs)
}

// validateToolPairs checks that tool messages answer the calls of the
// assistant message before them, every one of them, before anything else.
func validateToolPairs(d Dialect, msgs []any) (int, string, string) {
	var pending []string // ids of calls still to answer
	missing := func() (int, string, string) {
		return http.StatusBadRequest, "invalid_request_error", "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(pending, ", ")
	}
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		role, _ := mm["role"].(string)
		if role == "tool" {
			id, _ := mm["tool_call_id"].(string)
			k := indexOf(pending, id)
			if k < 0 {
				return http.StatusBadRequest, "invalid_request_error", "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
			}
			pending = append(pending[:k], pending[k+1:]...)
			continue
		}
		if len(pending) > 0 {
			return missing()
		}
		if role == "assistant" {
			calls, _ := mm["tool_calls"].([]any)
			for _, c := range calls {
				cm, _ := c.(map[string]any)
				id, _ := cm["id"].(string)
				f, _ := cm["function"].(map[string]any)
				args, _ := f["arguments"].(string)
				if (d == VLLM || d == LlamaCpp) && !json.Valid([]byte(args)) {
					return http.StatusBadRequest, "BadRequestError", "Failed to parse the arguments of tool call " + id + " as JSON"
				}
				pending = append(pending, id)
			}
		}
	}
	if len(pending) > 0 {
		return missing()
	}
	return 0, "", ""
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func itoa(i int) string { return mustJSON(i) }

// thinkingChunks are a reply's reasoning deltas in the dialect's form.
func thinkingChunks(d Dialect, rep Reply) []string {
	var out []string
	for _, t := range thinkingOf(d, rep) {
		switch d {
		case Mistral:
			out = append(out, chunk(d, map[string]any{"content": []any{map[string]any{"type": "thinking",
				"thinking": []any{map[string]any{"type": "text", "text": t}}}}}, nil))
		case DeepSeek:
			out = append(out, chunk(d, map[string]any{"content": nil, "reasoning_content": t}, nil))
		default:
			out = append(out, chunk(d, map[string]any{"content": nil, "reasoning": t}, nil))
		}
	}
	return out
}
