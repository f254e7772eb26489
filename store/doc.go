// Package store keeps toolmark's state in PostgreSQL through pgx/v5:
// users and API tokens, conversations and messages, turns with their leases,
// the event log of every turn, tool-call records, todos and the knowledge
// base searched by the agent's tools.
//
// # Opening and migrating
//
// Open connects a pool and pings the server; it does not change the schema.
// Migrate applies the migrations embedded from package sql (with
// github.com/jackc/tern/v2, under an advisory lock, so replicas starting
// together apply them once). Ready reports whether the server is reachable
// and the schema is current.
//
// # Ownership
//
// Every method that takes an owner id treats another user's conversation or
// turn exactly like a missing one: a *toolmark.Error with code ENOTFOUND.
// Methods without an owner id (TurnByID, AppendEvents, …) are for the runner,
// which works on turns it was handed.
//
// # Errors
//
// Errors a client may see are *toolmark.Error values with the codes of the
// root package: ENOTFOUND, ECONFLICT, EINVALID, ETOOLARGE, EUNAUTHORIZED.
// Other errors are wrapped with lower-case context and are internal.
//
// # Event log
//
// AppendEvents assigns each turn's events a gapless seq starting at 1 in a
// single statement that takes the turn's row lock, so concurrent appenders
// are serialised; it notifies the channel "toolmark_events" with
// "turnID:lastSeq" in the same statement. The assistant message stores its
// content together with the seq it reflects, so content can always be
// rebuilt as that snapshot plus the events after it (see Replay).
//
// # Leases and recovery
//
// A runner holds a lease on a turn (AcquireLease, RenewLease) while the turn
// is queued or running. SweepExpired finalises turns whose lease expired:
// content rebuilt from the log, every open ToolCall tag set to error
// "interrupted", turn_failed appended, the turn marked interrupted. It locks
// each turn with SELECT … FOR UPDATE SKIP LOCKED, so concurrent sweepers on
// several replicas finalise each turn exactly once.
package store
