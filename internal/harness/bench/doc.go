// Package bench is toolmark's load tool, the engine of `toolmark bench`: it
// drives a server over its public HTTP/SSE API only, the way many users at
// once would, and measures what they see and what it costs.
//
// # What it measures
//
//   - Delivery latency: for every event a follower receives live — made
//     after its stream connected (the response headers arrived) — its
//     arrival time minus the event's own time field (set by the server when
//     the event is made), so batching, persistence and fan-out are included.
//     Events made before (the turn_queued the POST writes, events read
//     again after a reconnection) are replayed: counted apart, with their
//     age at arrival.
//   - First-event latency: from sending the POST that starts a turn to the
//     arrival of that turn's first event on its first follower; first-token
//     latency: the same to its first text_delta.
//   - Whole-turn time: from the POST to the terminal event, against the same
//     turn run alone on the idle server just before the load.
//   - Stream integrity: every stream is checked for gaps and duplicates in
//     its sequence numbers (SeqCheck); both must be 0.
//   - Server cost, when the bench starts the server itself (StartServer):
//     its CPU time and peak RSS from /proc; the bench's own from
//     getrusage(2).
//   - Where the server's time went (ServerStages), from its /metrics read
//     before and after the load: its group commits' count and durations,
//     and how long its goroutines waited, runnable, for a processor.
//   - PostgreSQL cost, when the bench knows the database URL: transactions
//     (pg_stat_database), write transactions and WAL bytes
//     (pg_current_wal_lsn) per turn, against the answer's size, from a
//     sample before the load to one after the server stopped.
//   - Memory per idle follower (Idle): the server's RSS growth while N
//     streams wait on turns that stay alive, divided by N.
//
// # Modes
//
// Run runs one load: a number of turns, each followed by several streams,
// started so many at once (burst, closed loop) or at random instants at a
// given rate (Poisson arrivals, open loop: the bench keeps its schedule
// whatever the server does, and counts first-event and whole-turn times
// from each turn's scheduled instant, so a stall cannot hide behind a
// load that waited for it). With Render its followers read the rendered
// HTML the web page reads, compression accepted, and the report counts
// bytes on the wire per turn against the answer. With Protocols each turn
// also has one stream of each protocol named — the page's rendered HTML,
// an AI SDK frontend's UI message stream — read to its end and checked to
// end as its protocol says, their cost in the server's figures. FindCapacity runs Poisson
// loads at rising rates for the most turns in flight whose live-delivery
// p99 stays under a target. Sweep repeats it over a list of concurrencies, all turns
// of a step started at once, on a fresh server per step, and Table and Plot
// turn the result into a Markdown table and a PNG chart. Idle measures
// memory per idle follower.
//
// The bench is careful not to measure itself: one HTTP transport without a
// per-host connection limit, a bounded number of connections being dialled
// at once, and no per-event work beyond decoding the event's header fields.
package bench
