package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// TurnWrite is what one turn contributes to a group commit: its new events
// and what they changed.
type TurnWrite struct {
	TurnID    string
	MessageID string           // the turn's assistant message
	Events    []toolmark.Event // numbered by the runner (which holds the lease), data marshalled once; TurnID and MessageID need not be set
	Started   bool             // the turn moved from queued to running
	// Content, when not nil, is the message content after Events; it is
	// saved with the seq of the last event.
	Content *string
	// Reasoning, when not nil, is the message's thinking after Events,
	// saved with Content (nil leaves it as it is).
	Reasoning *toolmark.Reasoning
	ToolCalls []toolmark.ToolCallRecord // rows to create or update
	Todos     *[]toolmark.Todo          // the task list, when it changed
	// Finish, when not nil, ends the turn with the write (Content is then
	// required): the terminal event and the final content commit together.
	Finish *Finish
	// HandOver, when not zero, releases the turn's lease with the write
	// (Content is then required) for another replica to continue it (see
	// Adopt); if none does within HandOver, a sweep ends it.
	HandOver time.Duration
}

// Finish is the end of a turn.
type Finish struct {
	Status toolmark.TurnStatus
	Error  string
	Usage  toolmark.Usage // the tokens of the turn's model calls
}

func (w TurnWrite) lastSeq() int64 {
	if len(w.Events) == 0 {
		return 0
	}
	return w.Events[len(w.Events)-1].Seq
}

// RefusedError is returned by Commit when some turns' writes could not be
// made: their lease is held by another owner, they are final already (a
// sweep or a cancel on another replica finished them), or a write is
// invalid. The other turns' writes are committed.
type RefusedError struct {
	Turns map[string]error // turn id → why
}

func (e *RefusedError) Error() string {
	ids := make([]string, 0, len(e.Turns))
	for id, err := range e.Turns {
		ids = append(ids, id+": "+err.Error())
	}
	return "writes refused for " + strconv.Itoa(len(e.Turns)) + " turns: " + strings.Join(ids, "; ")
}

// ErrLeaseLost is why Commit refuses the write of a turn whose lease this
// owner no longer holds or that is already final.
var ErrLeaseLost = toolmark.Errorf(toolmark.ECONFLICT, "the turn's lease is held by another owner or the turn is finished")

// Commit writes the writes of several turns, all leased by owner, in one
// transaction of a few statements whatever the number of turns (group
// commit): the events, the tool-call rows, the todo lists, the content of
// the messages, the starts and the ends of turns, and one notification on
// ChannelEvents per 100 turns or so, which other replicas use to wake their
// followers (it may also name a turn whose write was refused; a follower
// that reads nothing new just waits), unless SetAnnounce turned them off.
// Nothing is read back.
//
// A turn whose lease owner no longer holds (or that is final) gets nothing
// written; Commit then returns a *RefusedError naming it, and the other
// turns' writes are committed. Any other error means nothing was written;
// the caller may retry the same writes (see Transient).
func (db *DB) Commit(ctx context.Context, owner string, ws []TurnWrite) error {
	refused := map[string]error{}
	ok := ws // the writes checkWrite let through: ws itself, unless it refused some
	for i, w := range ws {
		if err := db.checkWrite(w); err != nil {
			if len(refused) == 0 {
				ok = ws[:i:i] // append copies: ws is the caller's
			}
			refused[w.TurnID] = err
			continue
		}
		if len(refused) > 0 {
			ok = append(ok, w)
		}
	}
	if len(ok) > 0 {
		lost, err := db.commitOwn(ctx, owner, ok)
		if err != nil {
			return err
		}
		for _, id := range lost {
			refused[id] = ErrLeaseLost
		}
	}
	if len(refused) > 0 {
		return &RefusedError{Turns: refused}
	}
	return nil
}

// commitOwn commits ws on a connection of the commits' pool.
func (db *DB) commitOwn(ctx context.Context, owner string, ws []TurnWrite) ([]string, error) {
	conn, err := db.commits.Acquire(ctx)
	if err != nil {
		return nil, dbErr("committing events", "event data", err)
	}
	defer conn.Release() // one left in a transaction (an error) is closed, not reused
	return db.commit(ctx, conn, true, owner, ws)
}

func (db *DB) checkWrite(w TurnWrite) error {
	if !validID(w.TurnID) || !validID(w.MessageID) {
		return notFound("turn")
	}
	if len(w.Events) == 0 && w.HandOver == 0 {
		return toolmark.Errorf(toolmark.EINVALID, "a write needs events")
	}
	for _, e := range w.Events {
		if _, ok := e.Type.Code(); !ok {
			return toolmark.Errorf(toolmark.EINVALID, "unknown event type %q", toolcallmarkup.Shorten(string(e.Type), 40))
		}
		if e.Seq < 1 || e.Seq > math.MaxInt32 {
			return toolmark.Errorf(toolmark.EINVALID, "event seq %d is out of range (1 to %d)", e.Seq, math.MaxInt32)
		}
		if err := checkText("event data", []byte(e.Data), db.maxContent, false); err != nil {
			return err
		}
		if !json.Valid(e.Data) {
			return toolmark.Errorf(toolmark.EINVALID, "event data is not valid JSON")
		}
	}
	if w.Content != nil {
		if err := checkText("content", *w.Content, db.maxContent, false); err != nil {
			return err
		}
	} else if w.Finish != nil || w.HandOver > 0 {
		return toolmark.Errorf(toolmark.EINVALID, "finishing or handing over a turn needs its content")
	}
	if w.Finish != nil {
		if !w.Finish.Status.Final() {
			return toolmark.Errorf(toolmark.EINVALID, "turn status %q is not final", w.Finish.Status)
		}
		if err := checkText("error", w.Finish.Error, 4096, false); err != nil {
			return err
		}
	}
	if w.Todos != nil {
		for _, td := range *w.Todos {
			if err := checkText("todo", td.Text, 4096, false); err != nil {
				return err
			}
		}
	}
	for _, c := range w.ToolCalls {
		if !validID(c.ID) {
			return toolmark.Errorf(toolmark.EINVALID, "invalid tool call id")
		}
		for _, f := range []string{c.Name, c.ParentID, c.Status, c.Result, c.Error} {
			if err := checkText("tool call", f, 1<<20, false); err != nil {
				return err
			}
		}
		if c.Status != "" && !toolcallmarkup.Status(c.Status).Valid() {
			return toolmark.Errorf(toolmark.EINVALID, "invalid tool call status %q", c.Status)
		}
		if len(c.Arguments) > 0 && !json.Valid(c.Arguments) {
			return toolmark.Errorf(toolmark.EINVALID, "tool call arguments are not valid JSON")
		}
	}
	return nil
}

// guard is the condition every statement of a group commit puts on a turn:
// owner holds its lease and it is not final.
//
// Its plan must not depend on the statistics: a group commit's statements
// are prepared once per connection, and a generic plan made while the
// tables were small (a new database) is kept after they grew. As EXISTS,
// PostgreSQL made it a join that read every active turn and, for each,
// the batch's rows again; as a subquery testing the status in its WHERE,
// it chose a partial index of the active turns and scanned it for every
// row. Under load a group commit of 1 000 turns then took seconds, and the
// slower it got the bigger the next batch grew. So the guard is a scalar
// subquery (never made a join) on the turn's primary key alone, and
// leasedOwner tests the status inside a CASE, which no partial index
// matches: each row costs one primary-key lookup whatever the statistics
// say.
var guard = `(select ` + leasedOwner("g") + ` from turns g where g.id = u.turn_id) = $1`

// leasedOwner is the lease owner of turn row t while the turn is not final,
// else null.
func leasedOwner(t string) string {
	return `case when ` + t + `.status in ('queued', 'running') then ` + t + `.lease_owner end`
}

// commitConn is where a group commit runs: a connection of its own, or
// the transaction of a sweep.
type commitConn interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	Conn() *pgx.Conn
}

// commit writes ws through c and returns the turns whose writes the guard
// refused. With own set, c is a connection of its own and the commit is its
// transaction: the batch of statements sent in one round trip, which runs
// as one implicit transaction (the protocol's Sync comes after its last
// statement); or, when the events go in by COPY (copyFrom), the batch opened
// by BEGIN, then the COPY followed by COMMIT, sent as one query. Otherwise
// c is a transaction the caller commits. An error leaves c's transaction
// open or aborted: the caller drops it (a connection released in a
// transaction is closed).
func (db *DB) commit(ctx context.Context, c commitConn, own bool, owner string, ws []TurnWrite) (lost []string, err error) {
	g, err := newCommitGroup(ws, !db.quiet.Load())
	if err != nil {
		return nil, err
	}
	defer g.release()
	b := &pgx.Batch{}
	g.queue(b, owner)
	if db.testHookBatch != nil {
		db.testHookBatch(b)
	}
	if own && g.events.copies() {
		b.QueuedQueries = append([]*pgx.QueuedQuery{{SQL: "begin"}}, b.QueuedQueries...)
	}
	if err := c.SendBatch(ctx, b).Close(); err != nil {
		return nil, dbErr("committing events", "event data", err)
	}
	if g.events.copies() {
		var rows int
		g.copyBuf, rows = g.events.copyData(g.copyBuf, g.passed)
		sql := copyEvents
		if own {
			sql += "; commit"
		}
		if rows > 0 {
			_, err = c.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(g.copyBuf), sql)
		} else if own {
			_, err = c.Conn().Exec(ctx, "commit")
		}
		if err != nil {
			return nil, dbErr("committing events", "event data", err)
		}
	}
	for _, w := range ws {
		if _, ok := g.passed[w.TurnID]; !ok && len(w.Events) > 0 {
			lost = append(lost, w.TurnID)
		}
	}
	return lost, nil
}

// Transient reports whether err is worth retrying as it is: the database
// could not be reached, the connection broke, the server is starting or
// shutting down, or a concurrent writer (a sweep) won a race the retry will
// see.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	var refused *RefusedError
	if errors.As(err, &refused) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var te *toolmark.Error
	if errors.As(err, &te) && te.Code != toolmark.EUNAVAILABLE && te.Code != toolmark.ECONFLICT {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "23505", pgErr.Code == "40001", pgErr.Code == "40P01": // a race: unique violation, serialization failure, deadlock
			return true
		case strings.HasPrefix(pgErr.Code, "08"), strings.HasPrefix(pgErr.Code, "57P"), pgErr.Code == "53300":
			return true
		}
		return false
	}
	return true // connection-level errors
}
