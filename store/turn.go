package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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

// CreateTurn creates a turn in one of the owner's conversations, in one
// transaction: the user message (complete), an empty assistant message
// (streaming, seq 0) and the turn (queued). A request repeating the
// IdempotencyKey of an earlier turn of the same conversation returns that
// turn with created false. While another turn of the conversation is queued
// or running it is ECONFLICT. Content must be non-empty valid UTF-8 without
// NUL bytes and within the size limit (EINVALID, ETOOLARGE); on any error
// nothing is written.
func (db *DB) CreateTurn(ctx context.Context, nt NewTurn) (turn toolmark.Turn, created bool, err error) {
	if !validID(nt.ConversationID) || !validID(nt.OwnerID) {
		return toolmark.Turn{}, false, notFound("conversation")
	}
	if nt.Replaces != "" && !validID(nt.Replaces) {
		return toolmark.Turn{}, false, notFound("message")
	}
	if err := checkText("content", nt.Input.Content, db.maxContent, true); err != nil {
		return toolmark.Turn{}, false, err
	}
	if err := checkText("idempotency key", nt.IdempotencyKey, maxIdempotencyKeyBytes, false); err != nil {
		return toolmark.Turn{}, false, err
	}
	var lease *string
	if nt.LeaseOwner != "" {
		lease = &nt.LeaseOwner
	}
	qType, qData, qTime, err := queuedEvent(nt.Queued)
	if err != nil {
		return toolmark.Turn{}, false, err
	}
	// One statement, one round trip: the unique indexes decide the races
	// (one active turn per conversation, one turn per idempotency key).
	turn, err = scanTurn(db.pool.QueryRow(ctx, `
		with conv as (
			select id, coalesce(nullif($12, ''), nullif(model, ''), $13) as model from conversations where id = $1 and owner_id = $2
			  and ($10 = '' or exists (select 1 from messages where id = $10 and conversation_id = $1 and role = 'user' and replaced_by is null))
		), ids as (
			select time_ordered_id() as tid, time_ordered_id() as umid, time_ordered_id() as amid, model from conv
		), r as (
			update messages set replaced_by = (select tid from ids)
			where $10 <> '' and conversation_id = $1 and replaced_by is null
			  and pos >= (select pos from messages where id = $10)
		), m as (
			insert into messages (id, conversation_id, turn_id, role, content, status, version_of)
			select umid, $1, tid, 'user', $3, 'complete',
				(select coalesce(q.version_of, q.id) from messages q where $10 <> '' and q.id = $10) from ids
			union all
			select amid, $1, tid, 'assistant', '', 'streaming', null from ids
		), a as (
			insert into message_attachments (message_id, upload_id, pos)
			select ids.umid, u.id, x.ord from ids cross join unnest($14::text[]) with ordinality as x(id, ord)
			join uploads u on u.id = x.id and u.owner_id = $2
		), c as (
			update conversations set updated_at = now(), title = case when title = '' then $11 else title end,
				model = (select model from conv)
			where id in (select id from conv)
		), t as (
			insert into turns (id, conversation_id, user_message_id, assistant_message_id, status, idempotency_key,
				lease_owner, lease_expires_at, model)
			select tid, $1, umid, amid, 'queued', nullif($4, ''), $5::text,
				case when $5::text is null then null else now() + $6::interval end, model
			from ids
			returning *
		), e as (
			insert into events (turn, time, seq, type, data)
			select t.num, $9, 1, $7::smallint, $8::json from t where $7::smallint is not null
		)
		select `+newTurnColumns+` from t`,
		nt.ConversationID, nt.OwnerID, nt.Input.Content, nt.IdempotencyKey, lease, nt.LeaseTTL, qType, qData, qTime, nt.Replaces, nt.Title, nt.Input.Model, nt.DefaultModel, nt.Input.Attachments))
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		if nt.Queued != nil {
			turn.LastSeq = 1
		}
		return turn, true, nil
	case errors.Is(err, pgx.ErrNoRows) && nt.Replaces != "":
		// The message is replaced already: by this very request, retried
		// with its key, or by another.
		if nt.IdempotencyKey != "" {
			prev, lerr := scanTurn(db.pool.QueryRow(ctx, `
				select `+turnColumns+` from turns t join conversations c on c.id = t.conversation_id
				where t.conversation_id = $1 and c.owner_id = $2 and t.idempotency_key = $3`, nt.ConversationID, nt.OwnerID, nt.IdempotencyKey))
			if lerr == nil {
				return prev, false, nil
			}
		}
		return toolmark.Turn{}, false, notFound("message")
	case errors.Is(err, pgx.ErrNoRows):
		return toolmark.Turn{}, false, notFound("conversation")
	case errors.As(err, &pgErr) && pgErr.Code == "23505" && nt.IdempotencyKey != "":
		// A retried request (its key may collide with the active turn it
		// created, whichever index reports first).
		prev, lerr := scanTurn(db.pool.QueryRow(ctx, `
			select `+turnColumns+` from turns t
			where t.conversation_id = $1 and t.idempotency_key = $2`, nt.ConversationID, nt.IdempotencyKey))
		if lerr == nil {
			return prev, false, nil
		} else if !errors.Is(lerr, pgx.ErrNoRows) {
			return toolmark.Turn{}, false, dbErr("looking up idempotency key", "turn", lerr)
		}
		if pgErr.ConstraintName == "turns_one_active" {
			return toolmark.Turn{}, false, toolmark.Errorf(toolmark.ECONFLICT, "a turn is already active in this conversation")
		}
	case errors.As(err, &pgErr) && pgErr.ConstraintName == "turns_one_active":
		return toolmark.Turn{}, false, toolmark.Errorf(toolmark.ECONFLICT, "a turn is already active in this conversation")
	}
	return toolmark.Turn{}, false, dbErr("creating turn", "turn", err)
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

// queuedEvent returns the columns of a new turn's turn_queued event, all
// nil when it has none.
func queuedEvent(e *toolmark.Event) (typ *int16, data *string, at time.Time, err error) {
	if e == nil {
		return nil, nil, at, nil
	}
	code, err := eventTypeCode(e.Type)
	if err != nil {
		return nil, nil, at, err
	}
	d := string(e.Data)
	return &code, &d, e.Time, nil
}

// CreatedTurn is the outcome of one NewTurn of CreateTurns.
type CreatedTurn struct {
	Turn    toolmark.Turn
	Created bool
	Err     error
}

// CreateTurns creates several turns at once, as CreateTurn does each of
// them: one statement writes every turn that can be created outright (its
// conversation exists and is the owner's, no turn of it is active, its
// idempotency key is new); each of the others is then tried alone, so it
// gets CreateTurn's answer (the earlier turn of its key, ECONFLICT,
// ENOTFOUND, …). All must share LeaseOwner and LeaseTTL and carry Queued.
// The result has one entry per input, in order.
func (db *DB) CreateTurns(ctx context.Context, nts []NewTurn) []CreatedTurn {
	out := make([]CreatedTurn, len(nts))
	var convs, owners, contents, keys, qdata, titles, models, defaults []string
	var qtime []time.Time
	var index []int
	for i, nt := range nts {
		switch {
		case !validID(nt.ConversationID) || !validID(nt.OwnerID):
			out[i].Err = notFound("conversation")
		case nt.Queued == nil || nt.LeaseOwner != nts[0].LeaseOwner || nt.LeaseTTL != nts[0].LeaseTTL || nt.Replaces != "" || len(nt.Input.Attachments) > 0:
			out[i].Turn, out[i].Created, out[i].Err = db.CreateTurn(ctx, nt)
		default:
			if err := checkText("content", nt.Input.Content, db.maxContent, true); err != nil {
				out[i].Err = err
				continue
			}
			if err := checkText("idempotency key", nt.IdempotencyKey, maxIdempotencyKeyBytes, false); err != nil {
				out[i].Err = err
				continue
			}
			convs, owners, contents = append(convs, nt.ConversationID), append(owners, nt.OwnerID), append(contents, nt.Input.Content)
			keys, qdata, qtime = append(keys, nt.IdempotencyKey), append(qdata, string(nt.Queued.Data)), append(qtime, nt.Queued.Time)
			titles, models = append(titles, nt.Title), append(models, nt.Input.Model)
			defaults = append(defaults, nt.DefaultModel)
			index = append(index, i)
		}
	}
	if len(index) == 0 {
		return out
	}
	qtype, err := eventTypeCode(nts[index[0]].Queued.Type)
	if err != nil {
		for _, i := range index {
			out[i].Err = err
		}
		return out
	}
	rows, err := db.pool.Query(ctx, `
		with input as (
			select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $10::text[], $11::text[], $12::text[])
				with ordinality as i(conv, owner, content, key, qdata, qtime, title, model_asked, model_default, ord)
		), ok as (
			select i.*, time_ordered_id() as tid, time_ordered_id() as umid, time_ordered_id() as amid,
				coalesce(nullif(i.model_asked, ''), nullif(c.model, ''), i.model_default) as model
			from input i join conversations c on c.id = i.conv and c.owner_id = i.owner
		), t as (
			insert into turns (id, conversation_id, user_message_id, assistant_message_id, status, idempotency_key,
				lease_owner, lease_expires_at, model)
			select tid, conv, umid, amid, 'queued', nullif(key, ''), $7, now() + $8::interval, model from ok
			order by ord -- the first request of a conversation wins
			on conflict do nothing
			returning *
		), m as (
			insert into messages (id, conversation_id, turn_id, role, content, status)
			select ok.umid, ok.conv, ok.tid, 'user', ok.content, 'complete' from ok join t on t.id = ok.tid
			union all
			select ok.amid, ok.conv, ok.tid, 'assistant', '', 'streaming' from ok join t on t.id = ok.tid
		), c as (
			update conversations c set updated_at = now(), title = case when c.title = '' then ok.title else c.title end, model = ok.model
			from t join ok on ok.tid = t.id where c.id = t.conversation_id
		), e as (
			insert into events (turn, time, seq, type, data)
			select t.num, ok.qtime, 1, $9::smallint, ok.qdata::json from t join ok on ok.tid = t.id
		)
		select ok.ord, `+newTurnColumns+` from t join ok on ok.tid = t.id`,
		convs, owners, contents, keys, qdata, qtime, nts[index[0]].LeaseOwner, nts[index[0]].LeaseTTL, qtype, titles, models, defaults)
	done := make([]bool, len(index))
	if err == nil {
		for rows.Next() {
			var ord int
			var ts turnScan
			if err = rows.Scan(append([]any{&ord}, ts.dest()...)...); err != nil {
				break
			}
			t := ts.turn()
			t.LastSeq = 1
			done[ord-1] = true
			out[index[ord-1]] = CreatedTurn{Turn: t, Created: true}
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	if err != nil {
		db.log.Warn("creating turns together failed; creating them one by one", "turns", len(index), "err", err)
		clear(done)
	}
	for k, i := range index {
		if !done[k] {
			out[i].Turn, out[i].Created, out[i].Err = db.CreateTurn(ctx, nts[i])
		}
	}
	return out
}
