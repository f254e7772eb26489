package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark"
)

// ConversationSummary returns the compacted history of a conversation and
// the id of the last turn it covers ("" when there is none). It is not
// owner-scoped: the runner calls it for the turn it runs.
func (db *DB) ConversationSummary(ctx context.Context, conversationID string) (summary, throughTurnID string, err error) {
	if !validID(conversationID) {
		return "", "", notFound("conversation")
	}
	err = db.pool.QueryRow(ctx, `select summary, summary_through from conversations where id = $1`, conversationID).
		Scan(&summary, &throughTurnID)
	if err != nil {
		return "", "", dbErr("reading the conversation's summary", "conversation", err)
	}
	return summary, throughTurnID, nil
}

// SetConversationSummaryThrough stores a new summary of a conversation's
// oldest turns up to and including throughTurnID.
func (db *DB) SetConversationSummaryThrough(ctx context.Context, conversationID, summary, throughTurnID string) error {
	if !validID(conversationID) {
		return notFound("conversation")
	}
	if !validID(throughTurnID) {
		return toolmark.Errorf(toolmark.EINVALID, "invalid turn id")
	}
	if err := checkText("summary", summary, db.maxContent, false); err != nil {
		return err
	}
	tag, err := db.pool.Exec(ctx, `
		update conversations set summary = $2, summary_through = $3, updated_at = now()
		where id = $1 and exists (select 1 from turns where id = $3 and conversation_id = $1)`,
		conversationID, summary, throughTurnID)
	if err != nil {
		return dbErr("setting the conversation's summary", "conversation", err)
	}
	if tag.RowsAffected() == 0 {
		return notFound("conversation or turn")
	}
	return nil
}

// HistoryAfter drops from hist (oldest first) the turns up to and including
// throughTurnID, which a summary already covers.
func HistoryAfter(hist []toolmark.HistoryTurn, throughTurnID string) []toolmark.HistoryTurn {
	if throughTurnID == "" {
		return hist
	}
	for i, h := range hist {
		if h.TurnID == throughTurnID {
			return hist[i+1:]
		}
	}
	return hist
}

// TurnContext is what the runner loads before it runs a turn: the
// conversation's summary and its history after the summary.
type TurnContext struct {
	Summary string
	History []toolmark.HistoryTurn // finished turns before the turn, after the summary, oldest first
}

// TurnContext loads the summary and the history of a conversation before
// turnID in one round trip (one implicit transaction).
func (db *DB) TurnContext(ctx context.Context, conversationID, turnID string) (TurnContext, error) {
	var tc TurnContext
	if !validID(conversationID) || !validID(turnID) {
		return tc, notFound("conversation")
	}
	var through string
	var hist []toolmark.HistoryTurn
	var recs []toolmark.ToolCallRecord
	b := &pgx.Batch{}
	b.Queue(`select summary, summary_through from conversations where id = $1`, conversationID).QueryRow(func(row pgx.Row) error {
		return row.Scan(&tc.Summary, &through)
	})
	b.Queue(historyQuery, conversationID, turnID).Query(func(rows pgx.Rows) error {
		var err error
		hist, err = collectHistory(rows)
		return err
	})
	b.Queue(`select `+toolCallColumns+` from tool_calls where turn_id in (select t.id from (`+historyQuery+`) t)
		order by turn_id, started_at, id`, conversationID, turnID).Query(func(rows pgx.Rows) error {
		var err error
		recs, err = collectToolCalls(rows)
		return err
	})
	if err := db.pool.SendBatch(ctx, b).Close(); err != nil {
		return tc, dbErr("loading the conversation's history", "conversation", err)
	}
	attachCalls(hist, recs)
	tc.History = HistoryAfter(hist, through)
	return tc, nil
}
