// Package client is a Go client for the toolmark HTTP API, used by the
// terminal client (toolmark chat), the end-to-end tests and any Go program
// that talks to a toolmark server.
//
// # Calls
//
// New returns a Client for a server's base URL; WithToken adds the bearer
// token a server in token auth mode requires. Each method maps to one route:
// Info, CreateConversation, ListConversations, GetConversation (a
// ConversationPage), DeleteConversation, PostTurn, GetTurn, CancelTurn,
// Chat, and the everyday actions RenameConversation, SearchConversations,
// RetryTurn, RegenerateTurn (RetryTurnOn and RegenerateTurnOn with another
// model), EditMessage and ExportConversation. An error
// answer of the server is returned as an *APIError carrying the HTTP
// status and the code and message of the JSON error body.
//
//	c := client.New("http://127.0.0.1:8080", client.WithToken(token))
//	conv, err := c.CreateConversation(ctx, "")
//	ti, err := c.PostTurn(ctx, conv.ID, "What is a lease?", idempotencyKey)
//
// # Stream, Handlers and Accumulator
//
// Stream follows one turn from its start to its end and applies every
// event to an Accumulator, which calls the Handlers given: Content with
// each piece of text (never a piece of only whitespace), Start when a tool
// call starts (its name and a title a person can read), ToolCall at each
// stage of a call (its end exactly once), Todos and End.
//
//	acc, err := c.Stream(ctx, ti.Turn.ID, &client.Handlers{
//		Content: func(chunk, accumulated string) { fmt.Print(chunk) },
//		Start:   func(s client.ToolStart) { fmt.Println("\n→", s.Name, s.Title) },
//	})
//	acc.Text()      // the answer as a reader sees it
//	acc.ToolCalls() // each call with its Stage, Status, Args, Result or Error
//
// An Accumulator also works alone: NewAccumulator, then Add with each
// event of Events; AccumulatorOf holds a stored message, to show history
// with the same code as a live answer:
//
//	acc := client.NewAccumulator(nil)
//	for ev, err := range c.Events(ctx, turnID, 0) {
//		if err != nil {
//			return err
//		}
//		acc.Add(ev)
//		draw(acc.Content(), acc.ToolCalls(), acc.Bubble())
//	}
//
// # Following a turn
//
// Follow reads a turn's Server-Sent Events stream and calls a function with
// each event exactly once, in seq order; Events is the same as an iterator
// of decoded events. When the connection drops they reconnect with
// Last-Event-ID set to the last delivered seq, skip events the server
// sends again and reconnect on a gap, so the caller never sees a duplicate
// or a missing event. A snapshot event replaces the caller's state when
// the server's log no longer holds the cursor. Ending the context stops
// following, not the turn, unless CancelTurnOnStop is given.
//
// # Server-Sent Events
//
// Reader parses any event stream as the HTML standard describes it (CRLF,
// LF or CR line endings, comments, multi-line data), and never returns a
// frame the connection cut before its end. WriteFrame writes one frame.
package client
