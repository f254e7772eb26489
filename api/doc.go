// Package api is toolmark's HTTP interface: a chi router with JSON errors,
// bearer-token and cookie authentication, the conversation and turn routes,
// the Server-Sent Events stream of a turn with resume by Last-Event-ID, the
// health and metrics endpoints and the embedded web page.
//
// # Errors
//
// Every error is a JSON body {"error": {"code", "message"}}; the status
// follows from the code in exactly one function, [StatusOf]. Only internal
// errors are logged, with the request id; their details never reach the
// client.
//
// # Event streams
//
// A stream sends "retry: 1000", replays the events after the cursor
// (Last-Event-ID or ?after=N) from the event log, then takes the frames the
// replica's fan-out (package fanout) publishes once the runner committed
// them — or, for a turn another replica runs, reads the log again when
// that replica's notification says it grew. Only committed events reach a
// stream, and any replica can serve any turn. A cursor older than the
// retained log gets a snapshot event first. The stream ends after the
// turn's terminal event. A stream opened with ?render=html gets render
// frames instead (render.go).
package api
