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
// Methods without an owner id (TurnByID, Commit, …) are for the runner,
// which works on turns it was handed.
//
// # Errors
//
// Errors a client may see are *toolmark.Error values with the codes of the
// root package: ENOTFOUND, ECONFLICT, EINVALID, ETOOLARGE, EUNAUTHORIZED.
// Other errors are wrapped with lower-case context and are internal.
//
// # Event log and group commit
//
// The runner that holds a turn's lease numbers the turn's events (gapless,
// from 1; the turn_queued event is written with the turn by CreateTurns).
// Commit writes the events of many turns at once — with their tool-call
// rows, todo lists, message content, and the starts and ends of turns — in
// one implicit transaction of a few statements sent in one round trip (two
// when it has many event rows, which then go in by COPY), and
// notifies "toolmark_events" with "turnID:seq,…" for other replicas. Every
// statement is guarded by the lease: a turn whose lease the writer lost, or
// that another replica finished, gets nothing written (RefusedError), and
// the (turn, seq) primary key rejects a duplicate. The assistant message
// stores its content with the seq it reflects (at tool status changes and
// at the end), so the content is always that snapshot plus the events after
// it (the runner rebuilds it with package turnstate). The store knows no
// status words and no turn state: it stores what the runner wrote.
//
// # Leases, liveness and recovery
//
// A turn is created with its runner's lease; RenewLeases extends the leases
// of a runner's turns in one statement and reports cancel requests. Each
// replica holds a session-level advisory lock named after it on its
// listening connection (ListenAs): when its process or session dies the
// lock goes at once. SweepExpired finds the running turns whose owner is
// gone — lease expired or liveness lock not held — locks each, hands it
// as its log left it (LockedTurn) to the caller's EndFunc (the runner's
// policy: end it as interrupted) and commits the write that returns with
// the statements of Commit, in the same transaction: a turn ends by one
// write on every path. Adopt hands the queued turns of a gone owner, and
// the running turns a draining replica handed over, to a live one. Both
// lock each turn with SELECT … FOR UPDATE SKIP LOCKED, so concurrent
// replicas act on each turn exactly once. TakeCensus tells a replica in
// one statement how many others are alive, how many turns are active and
// whether one waits for it, so that it sweeps only then. Files: lease.go
// (leases, liveness, cancel requests), recover.go (sweep and adoption),
// replica.go (the census, replica leases, polling), commit.go and
// commit_group.go (the group commit, one statement per table).
//
// # Poolers
//
// The URL given to Open may go through a pooler in transaction mode
// (pooler.go): Open finds out, and then prepares no statement and sends no
// start-up setting. What needs a session — ListenAs, migrations — uses the
// direct URL (WithDirectURL); without one the store has no session
// (Sessions) and a replica shows it is alive with a replica lease row.
package store
