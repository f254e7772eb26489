package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// EventRow is one event as the runner logs it: its seq (the runner, which
// holds the turn's lease, numbers a turn's events), its type, its data
// marshalled once, and its time.
type EventRow struct {
	Seq  int64
	Type toolmark.EventType
	Data json.RawMessage
	Time time.Time
}

// TurnWrite is what one turn contributes to a group commit: its new events
// and what they changed.
type TurnWrite struct {
	TurnID    string
	MessageID string // the turn's assistant message
	Events    []EventRow
	Started   bool // the turn moved from queued to running
	// Content, when not nil, is the message content after Events; it is
	// saved with the seq of the last event.
	Content   *string
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
// that reads nothing new just waits). Nothing is read back.
//
// A turn whose lease owner no longer holds (or that is final) gets nothing
// written; Commit then returns a *RefusedError naming it, and the other
// turns' writes are committed. Any other error means nothing was written;
// the caller may retry the same writes (see Transient).
func (db *DB) Commit(ctx context.Context, owner string, ws []TurnWrite) error {
	refused := map[string]error{}
	ok := ws[:0:0]
	for _, w := range ws {
		if err := db.checkWrite(w); err != nil {
			refused[w.TurnID] = err
			continue
		}
		ok = append(ok, w)
	}
	if len(ok) > 0 {
		lost, err := db.commit(ctx, owner, ok)
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

func (db *DB) checkWrite(w TurnWrite) error {
	if !validID(w.TurnID) || !validID(w.MessageID) {
		return notFound("turn")
	}
	if len(w.Events) == 0 && w.HandOver == 0 {
		return toolmark.Errorf(toolmark.EINVALID, "a write needs events")
	}
	for _, e := range w.Events {
		if err := checkText("event type", string(e.Type), 100, true); err != nil {
			return err
		}
		if err := checkText("event data", string(e.Data), db.maxContent, false); err != nil {
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
const guard = `exists (select 1 from turns g where g.id = u.turn_id and g.lease_owner = $1 and g.status in ('queued', 'running'))`

// maxNotifyPayload keeps a notification under PostgreSQL's 8000-byte limit.
const maxNotifyPayload = 7000

func (db *DB) commit(ctx context.Context, owner string, ws []TurnWrite) (lost []string, err error) {
	var (
		evTurn, evType, evData []string
		evSeq                  []int64
		evTime                 []time.Time
		started                []string
		cTurn, cMsg, cContent  []string
		cSeq                   []int64
		tcTurn, tcID, tcParent []string
		tcName, tcStatus       []string
		tcResult, tcError      []string
		tcArgs                 []*string
		tcStart                []time.Time
		tcEnd                  []*time.Time
		tdTurn, tdTodos        []string
		fTurn, fStatus, fError []string
		fContent, fMsgStatus   []string
		fSeq, fIn, fOut        []int64
		hTurn                  []string
		hTTL                   []time.Duration
		notes                  []string
		note                   strings.Builder
	)
	expect := make(map[string]int, len(ws))
	for _, w := range ws {
		expect[w.TurnID] += len(w.Events)
		for _, e := range w.Events {
			evTurn, evSeq, evType = append(evTurn, w.TurnID), append(evSeq, e.Seq), append(evType, string(e.Type))
			evData, evTime = append(evData, string(e.Data)), append(evTime, e.Time)
		}
		if w.Started {
			started = append(started, w.TurnID)
		}
		switch {
		case w.Finish != nil:
			fTurn, fStatus, fError = append(fTurn, w.TurnID), append(fStatus, string(w.Finish.Status)), append(fError, w.Finish.Error)
			fContent, fSeq = append(fContent, *w.Content), append(fSeq, w.lastSeq())
			fMsgStatus = append(fMsgStatus, string(w.Finish.Status.MessageStatus()))
			fIn, fOut = append(fIn, w.Finish.Usage.InputTokens), append(fOut, w.Finish.Usage.OutputTokens)
		case w.Content != nil:
			cTurn, cMsg, cContent, cSeq = append(cTurn, w.TurnID), append(cMsg, w.MessageID), append(cContent, *w.Content), append(cSeq, w.lastSeq())
		}
		if w.HandOver > 0 && w.Finish == nil {
			hTurn, hTTL = append(hTurn, w.TurnID), append(hTTL, w.HandOver)
		}
		for _, c := range w.ToolCalls {
			status := c.Status
			if status == "" {
				status = "pending"
			}
			var args *string
			if len(c.Arguments) > 0 {
				a := string(c.Arguments)
				args = &a
			}
			start := c.StartedAt
			if start.IsZero() {
				start = time.Now()
			}
			tcTurn, tcID, tcParent = append(tcTurn, w.TurnID), append(tcID, c.ID), append(tcParent, c.ParentID)
			tcName, tcStatus, tcResult = append(tcName, c.Name), append(tcStatus, status), append(tcResult, c.Result)
			tcError, tcArgs, tcStart, tcEnd = append(tcError, c.Error), append(tcArgs, args), append(tcStart, start), append(tcEnd, c.FinishedAt)
		}
		if w.Todos != nil {
			todos := *w.Todos
			if todos == nil {
				todos = []toolmark.Todo{}
			}
			raw, err := json.Marshal(todos)
			if err != nil {
				return nil, fmt.Errorf("encoding todos: %w", err)
			}
			tdTurn, tdTodos = append(tdTurn, w.TurnID), append(tdTodos, string(raw))
		}
		item := w.TurnID + ":" + strconv.FormatInt(w.lastSeq(), 10)
		if note.Len()+len(item)+1 > maxNotifyPayload {
			notes = append(notes, note.String())
			note.Reset()
		}
		if note.Len() > 0 {
			note.WriteByte(',')
		}
		note.WriteString(item)
	}
	if note.Len() > 0 {
		notes = append(notes, note.String())
	}

	b := &pgx.Batch{}
	var counted map[string]int
	b.Queue(`
		with ins as (
			insert into events (turn_id, seq, type, data, time)
			select u.turn_id, u.seq, u.type, u.data::json, u.time
			from unnest($2::text[], $3::bigint[], $4::text[], $5::text[], $6::timestamptz[]) as u(turn_id, seq, type, data, time)
			where `+guard+`
			returning turn_id
		)
		select turn_id, count(*) from ins group by turn_id`,
		owner, evTurn, evSeq, evType, evData, evTime).Query(func(rows pgx.Rows) error {
		counted = make(map[string]int, len(ws))
		for rows.Next() {
			var id string
			var n int
			if err := rows.Scan(&id, &n); err != nil {
				return err
			}
			counted[id] = n
		}
		return rows.Err()
	})
	if len(tcTurn) > 0 {
		b.Queue(`
			insert into tool_calls as c (turn_id, id, parent_id, name, arguments, status, result, error, started_at, finished_at)
			select u.turn_id, u.id, u.parent_id, u.name, u.arguments::json, u.status, u.result, u.error, u.started_at, u.finished_at
			from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::timestamptz[], $11::timestamptz[])
				as u(turn_id, id, parent_id, name, arguments, status, result, error, started_at, finished_at)
			where `+guard+toolCallConflict,
			owner, tcTurn, tcID, tcParent, tcName, tcArgs, tcStatus, tcResult, tcError, tcStart, tcEnd)
	}
	if len(tdTurn) > 0 {
		b.Queue(`
			insert into todos (turn_id, todos)
			select u.turn_id, u.todos::json from unnest($2::text[], $3::text[]) as u(turn_id, todos)
			where `+guard+`
			on conflict (turn_id) do update set todos = excluded.todos, updated_at = now()`,
			owner, tdTurn, tdTodos)
	}
	if len(cMsg) > 0 {
		b.Queue(`
			update messages m set content = u.content, seq = u.seq, updated_at = now()
			from unnest($2::text[], $3::text[], $4::text[], $5::bigint[]) as u(turn_id, id, content, seq)
			where m.id = u.id and m.seq <= u.seq
			  and exists (select 1 from turns g where g.id = u.turn_id and g.assistant_message_id = m.id
				and g.lease_owner = $1 and g.status in ('queued', 'running'))`,
			owner, cTurn, cMsg, cContent, cSeq)
	}
	if len(started) > 0 {
		b.Queue(`
			update turns set status = 'running', started_at = coalesce(started_at, now())
			where id = any($2) and lease_owner = $1 and status = 'queued'`, owner, started)
	}
	if len(fTurn) > 0 {
		b.Queue(`
			with u as (
				select * from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::bigint[], $9::bigint[])
					as u(id, status, error, content, seq, msg_status, input_tokens, output_tokens)
			), t as (
				update turns set status = u.status, error = u.error, finished_at = now(), last_seq = u.seq,
					lease_owner = null, lease_expires_at = null, input_tokens = u.input_tokens, output_tokens = u.output_tokens
				from u where turns.id = u.id and turns.lease_owner = $1 and turns.status in ('queued', 'running')
				returning turns.id, turns.assistant_message_id
			)
			update messages m set content = u.content, seq = u.seq, status = u.msg_status, updated_at = now()
			from t join u on u.id = t.id where m.id = t.assistant_message_id`,
			owner, fTurn, fStatus, fError, fContent, fSeq, fMsgStatus, fIn, fOut)
	}
	if len(hTurn) > 0 {
		// Last: the statements above check the lease this one gives up.
		b.Queue(`
			update turns t set lease_owner = null, lease_expires_at = now() + u.ttl
			from unnest($2::text[], $3::interval[]) as u(id, ttl)
			where t.id = u.id and t.lease_owner = $1 and t.status in ('queued', 'running')`, owner, hTurn, hTTL)
	}
	b.Queue(`select pg_notify('`+ChannelEvents+`', p) from unnest($1::text[]) as p`, notes)

	// One round trip: the statements of a batch run in one implicit
	// transaction (the protocol's Sync comes after the last one), so they
	// commit together or not at all.
	if err := db.commits.SendBatch(ctx, b).Close(); err != nil {
		return nil, dbErr("committing events", "event data", err)
	}
	for id, n := range expect {
		if counted[id] != n {
			lost = append(lost, id)
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
