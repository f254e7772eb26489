// Package client is a Go client for the toolmark HTTP API, used by the
// terminal client (toolmark chat), the end-to-end tests and any Go program
// that talks to a toolmark server.
//
// # Calls
//
// New returns a Client for a server's base URL; WithToken adds the bearer
// token a server in token auth mode requires. Each method maps to one route:
// Info, CreateConversation, ListConversations, GetConversation,
// DeleteConversation, PostTurn, GetTurn, CancelTurn and Chat. An error answer
// of the server is returned as an *APIError carrying the HTTP status and the
// code and message of the JSON error body.
//
// # Following a turn
//
// Follow reads a turn's Server-Sent Events stream and calls a function with
// each event exactly once, in seq order. When the connection drops it
// reconnects with Last-Event-ID set to the last delivered seq, skips events
// the server sends again and reconnects on a gap, so the caller never sees a
// duplicate or a missing event. A snapshot event replaces the caller's state
// when the server's log no longer holds the cursor.
//
// # Server-Sent Events
//
// Reader parses any event stream as the HTML standard describes it (CRLF,
// LF or CR line endings, comments, multi-line data), and never returns a
// frame the connection cut before its end. WriteFrame writes one frame.
package client
