package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark"
)

// maxIdempotencyKeyBytes limits idempotency keys.
const maxIdempotencyKeyBytes = 200

// NewTurn is the input of CreateTurn.
type NewTurn struct {
	OwnerID        string
	ConversationID string
	Input          toolmark.TurnInput // the user's message, the model chosen for it and its attachments
	// DefaultModel is the model of a turn whose Input names none in a
	// conversation that has none yet (Input.Model, else the
	// conversation's last model, else this).
	DefaultModel string
	// Title names an untitled conversation with the turn (its first
	// question, cut); a conversation with a title keeps it.
	Title          string
	IdempotencyKey string // optional; a retried request with the same key gets the same turn
	// Replaces, when set, is a live user message of the conversation: the
	// new turn takes its place, and it and every message after it are
	// marked replaced by the new turn (kept, but left out of the
	// conversation and the model's history) — a retry, a regeneration or
	// an edit.
	Replaces string
	// LeaseOwner, when set, takes the new turn's lease for LeaseTTL, and
	// Queued is logged as the turn's first event (seq 1): the runner that
	// will run the turn creates it in the same transaction.
	LeaseOwner string
	LeaseTTL   time.Duration
	Queued     *toolmark.Event
}

// turnColumnsOf lists a turn's columns for scanTurn, from the table alias
// a. A running turn's seq is that of its newest event (the runner numbers
// events and writes turns.last_seq only when the turn ends).
func turnColumnsOf(a string) string {
	return strings.NewReplacer("t.", a+".").Replace(`t.id, t.conversation_id, t.user_message_id, t.assistant_message_id, t.status, t.error,
	coalesce(t.idempotency_key, ''), coalesce(t.lease_owner, ''), t.lease_expires_at,
	greatest(t.last_seq, coalesce((select max(e.seq) from events e where e.turn = t.num), 0)),
	t.created_at, t.started_at, t.finished_at, t.input_tokens, t.output_tokens, t.model`)
}

var turnColumns = turnColumnsOf("t")

// newTurnColumns is turnColumns for a turn being inserted, which has no
// event to look up yet.
var newTurnColumns = strings.Replace(turnColumns,
	"greatest(t.last_seq, coalesce((select max(e.seq) from events e where e.turn = t.num), 0))", "t.last_seq", 1)

func scanTurn(row pgx.Row) (toolmark.Turn, error) {
	var ts turnScan
	err := row.Scan(ts.dest()...)
	return ts.turn(), err
}

// turnScan receives the columns of turnColumns.
type turnScan struct {
	t       toolmark.Turn
	in, out int64
}

// dest returns the scan destinations of turnColumns, then more.
func (s *turnScan) dest(more ...any) []any {
	t := &s.t
	return append([]any{&t.ID, &t.ConversationID, &t.UserMessageID, &t.AssistantMessageID, &t.Status, &t.Error,
		&t.IdempotencyKey, &t.LeaseOwner, &t.LeaseExpiresAt, &t.LastSeq,
		&t.CreatedAt, &t.StartedAt, &t.FinishedAt, &s.in, &s.out, &t.Model}, more...)
}

// turn returns the scanned turn.
func (s *turnScan) turn() toolmark.Turn {
	if s.in != 0 || s.out != 0 {
		s.t.Usage = &toolmark.Usage{InputTokens: s.in, OutputTokens: s.out}
	}
	return s.t
}

func collectTurns(rows pgx.Rows) ([]toolmark.Turn, error) {
	ts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (toolmark.Turn, error) { return scanTurn(r) })
	if ts == nil && err == nil {
		ts = []toolmark.Turn{}
	}
	return ts, err
}

// GetTurn returns a turn of one of the owner's conversations.
func (db *DB) GetTurn(ctx context.Context, ownerID, turnID string) (toolmark.Turn, error) {
	if !validID(turnID) || !validID(ownerID) {
		return toolmark.Turn{}, notFound("turn")
	}
	t, err := scanTurn(db.pool.QueryRow(ctx, `
		select `+turnColumns+` from turns t join conversations c on c.id = t.conversation_id
		where t.id = $1 and c.owner_id = $2`, turnID, ownerID))
	if err != nil {
		return toolmark.Turn{}, dbErr("getting turn", "turn", err)
	}
	return t, nil
}

// TurnByID returns a turn whoever owns it; it is for the runner.
func (db *DB) TurnByID(ctx context.Context, turnID string) (toolmark.Turn, error) {
	if !validID(turnID) {
		return toolmark.Turn{}, notFound("turn")
	}
	t, err := scanTurn(db.pool.QueryRow(ctx, `select `+turnColumns+` from turns t where t.id = $1`, turnID))
	if err != nil {
		return toolmark.Turn{}, dbErr("getting turn", "turn", err)
	}
	return t, nil
}

// ConversationHistory returns the finished turns (completed, failed,
// cancelled or interrupted; see toolmark.HistoryTurn.Status) of a conversation that
// came before beforeTurnID, oldest first, with their tool calls. An empty
// beforeTurnID returns every finished turn.
func (db *DB) ConversationHistory(ctx context.Context, conversationID, beforeTurnID string) ([]toolmark.HistoryTurn, error) {
	if !validID(conversationID) || (beforeTurnID != "" && !validID(beforeTurnID)) {
		return nil, notFound("conversation")
	}
	rows, err := db.pool.Query(ctx, historyQuery, conversationID, beforeTurnID)
	if err != nil {
		return nil, fmt.Errorf("reading conversation history: %w", err)
	}
	hs, err := collectHistory(rows)
	if err != nil || len(hs) == 0 {
		return hs, err
	}
	ids := make([]string, len(hs))
	for i, h := range hs {
		ids[i] = h.TurnID
	}
	rows, err = db.pool.Query(ctx, `select `+toolCallColumns+` from tool_calls where turn_id = any($1) order by turn_id, started_at, id`, ids)
	if err != nil {
		return nil, fmt.Errorf("reading conversation history: %w", err)
	}
	recs, err := collectToolCalls(rows)
	if err != nil {
		return nil, fmt.Errorf("reading conversation history: %w", err)
	}
	attachCalls(hs, recs)
	return hs, nil
}

// historyQuery selects the finished turns of conversation $1 before turn $2
// (” for all), oldest first: id, status, user text, assistant content and
// reasoning.
// The test on replaced_by is written so that no partial index matches it:
// a generic plan made on a new database otherwise read every live message
// (the partial index messages_conversation_live, with no condition) for
// each turn, instead of looking the user message up by its key.
const historyQuery = `
		select t.id, t.status, um.content as user_text, am.content as assistant_content, am.reasoning
		from turns t
		join messages um on um.id = t.user_message_id
		join messages am on am.id = t.assistant_message_id
		where t.conversation_id = $1
		  and t.status not in ('queued', 'running') and coalesce(um.replaced_by, '') = ''
		  and ($2 = '' or um.pos < (select m.pos from turns b join messages m on m.id = b.user_message_id where b.id = $2))
		order by um.pos`

func collectHistory(rows pgx.Rows) ([]toolmark.HistoryTurn, error) {
	hs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (toolmark.HistoryTurn, error) {
		var h toolmark.HistoryTurn
		var reasoning []byte
		if err := r.Scan(&h.TurnID, &h.Status, &h.UserText, &h.AssistantContent, &reasoning); err != nil {
			return h, err
		}
		rs, err := parseReasoning(reasoning)
		if rs != nil {
			h.Reasoning = rs.Parts
		}
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading conversation history: %w", err)
	}
	if hs == nil {
		hs = []toolmark.HistoryTurn{}
	}
	return hs, nil
}

// attachCalls hands each tool-call record to its turn of hs.
func attachCalls(hs []toolmark.HistoryTurn, recs []toolmark.ToolCallRecord) {
	index := make(map[string]int, len(hs))
	for i, h := range hs {
		index[h.TurnID] = i
	}
	for _, r := range recs {
		if i, ok := index[r.TurnID]; ok {
			hs[i].ToolCalls = append(hs[i].ToolCalls, r)
		}
	}
}

// turnConflict returns ENOTFOUND when the turn does not exist and an
// ECONFLICT with msg when it does.
func (db *DB) turnConflict(ctx context.Context, turnID, msg string) error {
	var exists bool
	if err := db.pool.QueryRow(ctx, `select exists (select 1 from turns where id = $1)`, turnID).Scan(&exists); err != nil {
		return fmt.Errorf("looking up turn: %w", err)
	}
	if !exists {
		return notFound("turn")
	}
	return toolmark.Errorf(toolmark.ECONFLICT, "%s", msg)
}
