package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// ChannelEvents is the notification channel on which AppendEvents announces
// new events, with payload "turnID:lastSeq".
const ChannelEvents = "toolmark_events"

// ChannelCancel is the notification channel on which RequestCancel
// announces a cancel request, with the turn id as payload.
const ChannelCancel = "toolmark_cancel"

// ErrCursorPruned is returned by EventsAfter when events after the cursor
// were pruned from the log; the caller sends a snapshot instead. It is an
// ECONFLICT *toolmark.Error; test for it with errors.Is.
var ErrCursorPruned = &toolmark.Error{Code: toolmark.ECONFLICT, Message: "events after the cursor are no longer in the log"}

// maxEventsPerRead caps the limit of EventsAfter.
const maxEventsPerRead = 10000

// EventInput is one event to append. Data is marshalled to JSON
// (json.RawMessage and []byte are taken as they are and must be valid
// JSON); nil becomes {}. A zero Time means now.
type EventInput struct {
	Type toolmark.EventType
	Data any
	Time time.Time
}

// querier is what a pool and a transaction have in common.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// AppendEvents appends events to a turn's log in one statement and returns
// them with their seq: gapless, starting at 1 in each turn. The statement
// takes the turn's row lock, so concurrent appenders to one turn are
// serialised, and notifies ChannelEvents with "turnID:lastSeq" when it
// commits. messageID must be the turn's assistant message. A turn that is
// already final is ECONFLICT; an unknown turn ENOTFOUND.
func (db *DB) AppendEvents(ctx context.Context, turnID, messageID string, in []EventInput) ([]toolmark.Event, error) {
	return db.appendEvents(ctx, db.pool, turnID, messageID, in)
}

func (db *DB) appendEvents(ctx context.Context, q querier, turnID, messageID string, in []EventInput) ([]toolmark.Event, error) {
	if !validID(turnID) || !validID(messageID) {
		return nil, notFound("turn")
	}
	if len(in) == 0 {
		return []toolmark.Event{}, nil
	}
	types := make([]string, len(in))
	datas := make([]string, len(in))
	times := make([]time.Time, len(in))
	out := make([]toolmark.Event, len(in))
	now := time.Now()
	for i, e := range in {
		if err := checkText("event type", string(e.Type), 100, true); err != nil {
			return nil, err
		}
		raw, err := marshalData(e.Data)
		if err != nil {
			return nil, err
		}
		if err := checkText("event data", string(raw), db.maxContent, false); err != nil {
			return nil, err
		}
		t := e.Time
		if t.IsZero() {
			t = now
		}
		types[i], datas[i], times[i] = string(e.Type), string(raw), t
		// PostgreSQL keeps microseconds; pgx truncates.
		out[i] = toolmark.Event{TurnID: turnID, MessageID: messageID, Type: e.Type, Time: t.Truncate(time.Microsecond).UTC(), Data: raw}
	}
	rows, err := q.Query(ctx, `
		with t as (
			update turns set last_seq = last_seq + $3
			where id = $1 and assistant_message_id = $2 and status in ('queued', 'running')
			returning last_seq - $3 as base, pg_notify('`+ChannelEvents+`', id || ':' || last_seq) as notified
		)
		insert into events (turn_id, seq, type, data, time)
		select $1, t.base + u.ord, u.type, u.data::json, u.time
		from t, unnest($4::text[], $5::text[], $6::timestamptz[]) with ordinality as u(type, data, time, ord)
		returning seq`, turnID, messageID, len(in), types, datas, times)
	if err != nil {
		return nil, dbErr("appending events", "event data", err)
	}
	seqs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, dbErr("appending events", "event data", err)
	}
	if len(seqs) == 0 {
		return nil, db.appendRefused(ctx, q, turnID, messageID)
	}
	base := seqs[0]
	for _, s := range seqs {
		base = min(base, s)
	}
	for i := range out {
		out[i].Seq = base + int64(i)
	}
	return out, nil
}

// appendRefused explains why AppendEvents inserted nothing.
func (db *DB) appendRefused(ctx context.Context, q querier, turnID, messageID string) error {
	var status string
	err := q.QueryRow(ctx, `select status from turns where id = $1 and assistant_message_id = $2`, turnID, messageID).Scan(&status)
	if err != nil {
		return dbErr("appending events", "turn", err)
	}
	return toolmark.Errorf(toolmark.ECONFLICT, "turn is already %s", status)
}

func marshalData(v any) (json.RawMessage, error) {
	switch d := v.(type) {
	case nil:
		return json.RawMessage("{}"), nil
	case json.RawMessage:
		if !json.Valid(d) {
			return nil, toolmark.Errorf(toolmark.EINVALID, "event data is not valid JSON")
		}
		return d, nil
	case []byte:
		if !json.Valid(d) {
			return nil, toolmark.Errorf(toolmark.EINVALID, "event data is not valid JSON")
		}
		return json.RawMessage(d), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, toolmark.Errorf(toolmark.EINVALID, "event data cannot be encoded as JSON: %v", err)
	}
	return b, nil
}

// EventsAfter returns up to limit events of a turn with seq greater than
// after, in seq order (limit ≤ 0 means 1000). It returns ErrCursorPruned
// when some of those events were pruned from the log, and ENOTFOUND for an
// unknown turn.
func (db *DB) EventsAfter(ctx context.Context, turnID string, after int64, limit int) ([]toolmark.Event, error) {
	if !validID(turnID) {
		return nil, notFound("turn")
	}
	if limit <= 0 || limit > maxEventsPerRead {
		limit = min(max(limit, 1000), maxEventsPerRead)
	}
	after = max(after, 0)
	return db.eventsAfter(ctx, db.pool, turnID, after, limit)
}

func (db *DB) eventsAfter(ctx context.Context, q querier, turnID string, after int64, limit int) ([]toolmark.Event, error) {
	rows, err := q.Query(ctx, `
		select t.first_seq, t.assistant_message_id, e.seq, e.type, e.data, e.time
		from turns t left join lateral (
			select seq, type, data, time from events
			where turn_id = t.id and seq > $2
			order by seq limit $3
		) e on true
		where t.id = $1`, turnID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("reading events: %w", err)
	}
	defer rows.Close()
	found := false
	var firstSeq int64
	events := []toolmark.Event{}
	for rows.Next() {
		found = true
		var msgID string
		var seq *int64
		var typ *string
		var data []byte
		var t *time.Time
		if err := rows.Scan(&firstSeq, &msgID, &seq, &typ, &data, &t); err != nil {
			return nil, fmt.Errorf("reading events: %w", err)
		}
		if seq == nil {
			continue
		}
		events = append(events, toolmark.Event{Seq: *seq, TurnID: turnID, MessageID: msgID, Type: toolmark.EventType(*typ), Time: t.UTC(), Data: json.RawMessage(data)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading events: %w", err)
	}
	if !found {
		return nil, notFound("turn")
	}
	if after < firstSeq-1 {
		return nil, ErrCursorPruned
	}
	return events, nil
}

// Snapshot returns the stored content of a turn's assistant message and the
// seq of the last event it reflects.
func (db *DB) Snapshot(ctx context.Context, turnID string) (content string, seq int64, err error) {
	if !validID(turnID) {
		return "", 0, notFound("turn")
	}
	err = db.pool.QueryRow(ctx, `
		select m.content, m.seq from turns t join messages m on m.id = t.assistant_message_id
		where t.id = $1`, turnID).Scan(&content, &seq)
	if err != nil {
		return "", 0, dbErr("reading snapshot", "turn", err)
	}
	return content, seq, nil
}

// SaveContent stores an assistant message's content together with the seq
// of the last event it reflects. It only moves forward: content with a seq
// older than the stored one is ignored.
func (db *DB) SaveContent(ctx context.Context, messageID, content string, seq int64) error {
	return db.saveContent(ctx, db.pool, messageID, content, seq)
}

func (db *DB) saveContent(ctx context.Context, q querier, messageID, content string, seq int64) error {
	if !validID(messageID) {
		return notFound("message")
	}
	if err := checkText("content", content, db.maxContent, false); err != nil {
		return err
	}
	var applied bool
	err := q.QueryRow(ctx, `
		with u as (
			update messages set content = $2, seq = $3, updated_at = now()
			where id = $1 and seq <= $3
			returning 1
		)
		select exists (select 1 from u) or exists (select 1 from messages where id = $1)`,
		messageID, content, seq).Scan(&applied)
	if err != nil {
		return dbErr("saving content", "message", err)
	}
	if !applied {
		return notFound("message")
	}
	return nil
}

// RewriteToolCall changes the ToolCall tag with the given id inside a
// stored message, atomically: it locks the message row, rewrites the
// content with toolcallmarkup.Rewrite and stores it. A missing message or
// tag is ENOTFOUND; an update a final tag cannot take is ECONFLICT.
func (db *DB) RewriteToolCall(ctx context.Context, messageID, toolCallID string, u toolcallmarkup.Update) error {
	if !validID(messageID) {
		return notFound("message")
	}
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		var content string
		if err := tx.QueryRow(ctx, `select content from messages where id = $1 for update`, messageID).Scan(&content); err != nil {
			return dbErr("rewriting tool call", "message", err)
		}
		next, err := toolcallmarkup.Rewrite(content, toolCallID, u)
		switch {
		case errors.Is(err, toolcallmarkup.ErrNotFound):
			return notFound("tool call")
		case errors.Is(err, toolcallmarkup.ErrFinal), errors.Is(err, toolcallmarkup.ErrTransition):
			return toolmark.Errorf(toolmark.ECONFLICT, "tool call %s cannot change: %v", toolCallID, err)
		case err != nil:
			return toolmark.Errorf(toolmark.EINVALID, "rewriting tool call: %v", err)
		}
		if err := checkText("content", next, db.maxContent, false); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `update messages set content = $2, updated_at = now() where id = $1`, messageID, next)
		return dbErr("rewriting tool call", "message", err)
	})
	return err
}

// PruneEvents deletes the events of turns that finished before
// finishedBefore and returns how many it deleted. The message content and
// the seq it reflects stay; the turn records that its log now starts after
// its last seq, so EventsAfter answers an older cursor with ErrCursorPruned.
// It works through the turns in short transactions of pruneBatch turns.
func (db *DB) PruneEvents(ctx context.Context, finishedBefore time.Time) (int64, error) {
	var total int64
	for {
		var turns, n int64
		err := db.pool.QueryRow(ctx, `
			with t as (
				select id from turns
				where finished_at < $1 and first_seq <= last_seq
				limit $2
				for update skip locked
			), u as (
				update turns set first_seq = last_seq + 1
				from t where turns.id = t.id
				returning turns.id
			), d as (
				delete from events e using u where e.turn_id = u.id
				returning 1
			)
			select (select count(*) from u), (select count(*) from d)`, finishedBefore, pruneBatch).Scan(&turns, &n)
		if err != nil {
			return total, fmt.Errorf("pruning events: %w", err)
		}
		total += n
		if turns < pruneBatch {
			return total, nil
		}
	}
}

// pruneBatch is how many turns PruneEvents prunes per transaction.
const pruneBatch = 100
