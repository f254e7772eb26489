// Package mcptools gives an agent the tools of MCP (Model Context Protocol)
// servers: an mcpServers config file, as Claude Desktop and Cursor write
// it, becomes a Manager that keeps the servers connected (stdio, streamable
// HTTP and SSE, over the official Go SDK) and offers their tools as
// simplifiedagent.Tool values.
//
// # Calls
//
// A call sends a progress token; every progress notification becomes a
// tool_progress event (simplifiedagent.ReportProgress) and restarts the
// call's silence timer: a call is cut after ServerConfig.Timeout without
// an answer or progress, never while it reports progress. Cancelling the
// call's context sends notifications/cancelled. Protocol and transport
// failures end the call with a short sentence (tools.Error) that names no
// address; isError results end it with the tool's own text.
//
// # Servers
//
// A server that cannot start or be reached is StatusFailed, has no tools,
// and is tried again with backoff; one whose connection ends is
// reconnected. A stdio server gets only its configured environment plus
// PATH, HOME and LANG, and its stderr goes to the log prefixed with its
// name.
package mcptools
