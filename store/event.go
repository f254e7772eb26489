package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark"
)

// ChannelEvents is the notification channel on which Commit announces new
// events, with payload "turnID:lastSeq[,turnID:lastSeq…]".
const ChannelEvents = "toolmark_events"

// ChannelCancel is the notification channel on which RequestCancel
// announces a cancel request, with the turn id as payload.
const ChannelCancel = "toolmark_cancel"

// ChannelReplicas is the notification channel on which a replica that
// starts says so (Join), with its owner name as payload.
const ChannelReplicas = "toolmark_replicas"

// ChannelTurns is the notification channel on which a replica says that a
// turn started in a conversation (AnnounceTurn), so that the conversation's
// watchers on the other replicas hear of it. The payload is
// "turnID conversationID owner".
const ChannelTurns = "toolmark_turns"

// ErrCursorPruned is returned by EventsAfter when events after the cursor
// were pruned from the log; the caller sends a snapshot instead. It is an
// ECONFLICT *toolmark.Error; test for it with errors.Is.
var ErrCursorPruned = toolmark.ErrCursorPruned

// maxEventsPerRead caps the limit of EventsAfter.
const maxEventsPerRead = 10000

// querier is what a pool and a transaction have in common.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
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
			where turn = t.num and seq > $2::bigint
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
		var code *int16
		var data []byte
		var t *time.Time
		if err := rows.Scan(&firstSeq, &msgID, &seq, &code, &data, &t); err != nil {
			return nil, fmt.Errorf("reading events: %w", err)
		}
		if seq == nil || len(events) >= limit {
			continue
		}
		n := len(events)
		if events, err = (eventRow{*code, data, *seq, t.UTC()}).appendEvents(events, after, limit); err != nil {
			return nil, err
		}
		for i := n; i < len(events); i++ {
			events[i].TurnID, events[i].MessageID = turnID, msgID
		}
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
				returning turns.num
			), d as (
				delete from events e using u where e.turn = u.num
				returning `+eventsInRow+` as n
			)
			select (select count(*) from u), (select coalesce(sum(n), 0) from d)`, finishedBefore, pruneBatch).Scan(&turns, &n)
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
