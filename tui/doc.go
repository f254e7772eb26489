// Package tui is toolmark's terminal client: the full-screen program that
// `toolmark chat` opens in a terminal, and the line outputs it writes for
// scripts and pipes.
//
// # The full-screen client
//
// Run starts a Bubble Tea program. Its collapsed view (the default) shows
// the answer as rendered markdown (Glamour) and each tool call as one live
// line — spinner, name, parameters growing as they stream, then ✓, ✗ or ⊘
// with the result or error — with a sub-agent's calls nested, the task
// list as a checklist and a status line until the first token. Ctrl-O
// switches to the expanded view, a snapshot of every call's full
// parameters and result that no update touches until Ctrl-O returns to the
// live view. The events come from client.Events as messages; the state is
// a client.Accumulator per turn.
//
// # Line outputs
//
// Once sends one message and prints its turn as plain lines, only the
// answer (OutputQuiet) or one JSON event per line (OutputJSON); Lines does
// the same for messages read line by line. Both return errors wrapping
// ErrTurnFailed or ErrTurnCancelled for turns that did not complete.
//
// # Sanitising
//
// Everything that comes from the server goes through Sanitize before it
// reaches the terminal: no escape sequence and no control character but
// newline and tab.
package tui
