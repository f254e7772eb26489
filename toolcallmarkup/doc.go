// Package toolcallmarkup writes, parses and rewrites the <ToolCall> tags that
// carry live tool-call status inside an assistant message.
//
// It is the only code in toolmark that knows the markup format; the stream,
// the store, the renderer and the page all go through it. It imports only the
// standard library, does no I/O and keeps no global state.
//
// # The format
//
// A tool call is one element written on one line:
//
//	<ToolCall type="search_documents" status="running" toolCallId="call_1" query="rust"></ToolCall>
//
// Attributes are double-quoted and written in canonical order: type, status,
// toolCallId, parentToolCallId, the tool-specific ones in the order they were
// first set, then error. Values escape & < > " ' \ and write control
// characters (and U+2028, U+2029) as decimal character references. Values are
// cut to a number of characters: query to 200, url and error to 300,
// everything else to 500. A sub-agent's calls are elements inside the body of
// its own element. Readers also accept tags as Perplexica writes them, with a
// raw tab or line break inside a value; [OneLineTags] puts such tags on one
// line. docs/markup.md is the full specification.
//
// # Statuses
//
// A tag moves forward only: pending (arguments still streaming), running,
// then one of the final statuses success, error or cancelled. A final tag
// never changes again.
//
// # Untrusted text
//
// Text written by a model or a tool goes through [Document.AppendText], which
// neutralises it: every "<" that starts "<toolcall" or "</toolcall" in any
// letter case is written as "&lt;", and, so that the change can be undone,
// every "&lt;" (with any number of "amp;" after the "&") in front of such a
// name gets one more "amp;". Markdown's entity decoding then shows the text
// as it was written; inside code spans and code blocks, where entities are
// not decoded, a renderer calls [RestoreText]. Such text can never become a
// tag that [Parse] returns, and never changes what [Rewrite] or
// [Document.Update] do to the genuine tags.
//
// # Speed
//
// A [Document] keeps the message as a tree of text runs and tags indexed by
// id, so [Document.Update] costs the same for a 10 KB message and a 10 MB
// one. [Rewrite] works on a plain string and is linear in its length.
package toolcallmarkup
