// Package simplifiedagent is the tool loop of toolmark: it drives any
// langchaingo llms.Model, runs tools, and reports everything it does as
// events that carry ToolCall markup.
//
// # The loop
//
// Run calls the model with the conversation and the tools, streams the
// model's text and tool-call arguments, runs the tools the model asked for
// (concurrently, each with its own timeout) and hands their results back, for
// up to Request.MaxRounds model calls. A tool error goes back to the model as
// "error: …" and is not fatal. When ctx is cancelled Run returns promptly
// with every started tag final.
//
// # Events and markup
//
// The agent keeps no document of its own: it neutralises the model's text
// with a toolcallmarkup.Neutraliser, keeps each call's tag as a ToolCall
// value, and emits typed events (toolmark.Draft) through a toolmark.EmitFunc, one
// at a time and in order. Applying them to a turnstate.State — text_delta
// appended verbatim, tool_call_started as a new tag, every other
// tool_call_* as an update of its tag — gives the answer's content; the
// runner does exactly that, once. Every tool_call_* event carries the
// call's status line (ToolCallData.StatusText, see Request.StatusText).
//
// Per tool call the order is tool_call_started
// (pending), tool_call_delta*, tool_call_running, then exactly one of
// tool_call_success or tool_call_error. A call that is stopped by
// cancellation ends with a tool_call_error event whose Status is "cancelled"
// and whose Error is "cancelled".
//
// The bridge from langchaingo is a callbacks.Handler (see Handler): the
// loop puts the tool-call id into the context (ToolCallIDFromContext) before
// it calls HandleToolStart, the tool, and HandleToolEnd or HandleToolError,
// so any tools.Tool plugs in unchanged.
//
// # Streamed tool arguments
//
// Models report argument fragments through llmstream.ToolCallDeltaFunc and
// answer text through llms.WithStreamingFunc, so text that happens to look
// like a tool call stays text. Package openaiwire implements the OpenAI
// chat-completions stream this way; models that know nothing of llmstream
// still work, their tool calls are taken from the final response.
//
// # History
//
// BuildHistory turns earlier turns into human, AI-with-tool-calls and tool
// messages built from the stored tool-call records, never from raw markup;
// Compact folds the oldest turns into a summary when the history outgrows a
// budget.
package simplifiedagent
