package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark"
)

// MessageEntry is a message as a conversation shows it: the message, the
// rendering kept with it, and, for an answer, its turn's tool calls, todos
// and tokens.
type MessageEntry struct {
	toolmark.Message
	// HTML is the rendering kept with the message and HTMLKey what it was
	// rendered from ("" when none is kept; see CacheHTML).
	HTML, HTMLKey string
	ToolCalls     []toolmark.ToolCallRecord
	Todos         []toolmark.Todo
	TurnStatus    toolmark.TurnStatus // "" for a user message
	TurnError     string              // why the turn failed, was stopped or interrupted: the sentence its end carried
	Usage         *toolmark.Usage     // the turn's tokens, once it ended
	Model         string              // the id of the model of the answer's turn ("" for a question)
	// Versions are, for a question asked again (edited, regenerated,
	// retried), the ids of every question asked in its place, oldest first,
	// itself among them; nil for a question asked once and for an answer.
	Versions []string
}

// ConversationPage is a stretch of a conversation's messages, the latest
// first asked for: Messages are oldest first; More is true when older
// messages come before them (ask again with Before = Messages[0].Pos).
type ConversationPage struct {
	Conversation toolmark.Conversation
	Messages     []MessageEntry
	More         bool
}

// DefaultPageMessages is how many messages a page holds unless asked.
const DefaultPageMessages = 50

// MaxPageMessages bounds a page.
const MaxPageMessages = 500

// OpenConversation returns one of the owner's conversations with the
// latest limit of its messages before the position before (0: the latest),
// each with its turn's tool calls, todos, status and tokens, in one query
// whatever the conversation's length. Messages a retry, regenerate or edit
// replaced are left out. An unknown conversation, or another owner's, is
// ENOTFOUND.
func (db *DB) OpenConversation(ctx context.Context, ownerID, id string, before int64, limit int) (ConversationPage, error) {
	var p ConversationPage
	if !validID(id) || !validID(ownerID) {
		return p, notFound("conversation")
	}
	if limit <= 0 {
		limit = DefaultPageMessages
	}
	limit = min(limit, MaxPageMessages)
	rows, err := db.pool.Query(ctx, `
		select c.id, c.owner_id, c.title, c.summary, c.model, c.created_at, c.updated_at,
			m.id, m.pos, coalesce(m.turn_id, ''), m.role, m.content, m.status, m.seq, m.created_at, m.updated_at,
			coalesce(m.html, ''), coalesce(m.html_key, ''), m.reasoning,
			coalesce(t.status, ''), coalesce(t.error, ''), coalesce(t.input_tokens, 0), coalesce(t.output_tokens, 0),
			case when m.role = 'assistant' then coalesce(t.model, '') else '' end,
			case when m.role = 'assistant' then (
				select json_agg(json_build_object('id', tc.id, 'turnId', tc.turn_id, 'parentToolCallId', tc.parent_id,
					'name', tc.name, 'arguments', tc.arguments, 'status', tc.status, 'result', tc.result, 'error', tc.error,
					'startedAt', tc.started_at, 'finishedAt', tc.finished_at) order by tc.started_at, tc.id)
				from tool_calls tc where tc.turn_id = m.turn_id) end,
			case when m.role = 'assistant' then (select td.todos from todos td where td.turn_id = m.turn_id) end,
			case when m.role = 'user' then (
				select array_agg(v.id order by v.pos) from messages v
				where v.role = 'user' and (v.id = coalesce(m.version_of, m.id) or v.version_of = coalesce(m.version_of, m.id))) end
		from conversations c
		left join lateral (
			select * from messages m
			where m.conversation_id = c.id and m.replaced_by is null and ($3::bigint = 0 or m.pos < $3)
			order by m.pos desc limit $4
		) m on true
		left join turns t on t.id = m.turn_id
		where c.id = $1 and c.owner_id = $2
		order by m.pos`, id, ownerID, before, limit+1)
	if err != nil {
		return p, dbErr("opening conversation", "conversation", err)
	}
	found := false
	for rows.Next() {
		found = true
		e, ok, err := scanEntry(rows, &p.Conversation)
		if err != nil {
			rows.Close()
			return p, dbErr("opening conversation", "conversation", err)
		}
		if ok {
			p.Messages = append(p.Messages, e)
		}
	}
	if err := rows.Err(); err != nil {
		return p, dbErr("opening conversation", "conversation", err)
	}
	if !found {
		return p, notFound("conversation")
	}
	if len(p.Messages) > limit { // the extra, oldest row says there is more
		p.Messages, p.More = p.Messages[1:], true
	}
	if p.Messages == nil {
		p.Messages = []MessageEntry{}
	}
	return p, nil
}

// scanEntry reads one row of OpenConversation into c and a message entry;
// ok is false for the row of a conversation without messages.
func scanEntry(rows pgx.Rows, c *toolmark.Conversation) (e MessageEntry, ok bool, err error) {
	var (
		mid              *string
		pos              *int64
		turnID, role     *string
		content, status  *string
		seq              *int64
		created, updated *time.Time
		html, key, ts    string
		turnErr          string
		in, out          int64
		model            string
		calls, todos     []byte
		reasoning        []byte
		versions         []string
	)
	err = rows.Scan(&c.ID, &c.OwnerID, &c.Title, &c.Summary, &c.Model, &c.CreatedAt, &c.UpdatedAt,
		&mid, &pos, &turnID, &role, &content, &status, &seq, &created, &updated, &html, &key, &reasoning, &ts, &turnErr, &in, &out, &model, &calls, &todos, &versions)
	if err != nil || mid == nil {
		return e, false, err
	}
	e.Message = toolmark.Message{ID: *mid, Pos: *pos, ConversationID: c.ID, TurnID: *turnID, Role: toolmark.MessageRole(*role),
		Content: *content, Status: toolmark.MessageStatus(*status), Seq: *seq, CreatedAt: *created, UpdatedAt: *updated}
	e.HTML, e.HTMLKey, e.TurnStatus, e.TurnError, e.Model = html, key, toolmark.TurnStatus(ts), turnErr, model
	if e.Message.Reasoning, err = parseReasoning(reasoning); err != nil {
		return e, false, err
	}
	if len(versions) > 1 {
		e.Versions = versions
	}
	e.ToolCalls, e.Todos = []toolmark.ToolCallRecord{}, []toolmark.Todo{}
	if len(calls) > 0 {
		if err := json.Unmarshal(calls, &e.ToolCalls); err != nil {
			return e, false, fmt.Errorf("decoding tool calls: %w", err)
		}
	}
	if len(todos) > 0 {
		if err := json.Unmarshal(todos, &e.Todos); err != nil {
			return e, false, fmt.Errorf("decoding todos: %w", err)
		}
	}
	if in != 0 || out != 0 {
		e.Usage = &toolmark.Usage{InputTokens: in, OutputTokens: out}
	}
	return e, true, nil
}

// RenderedMessage is the rendering of a finished message, to keep with it.
type RenderedMessage struct {
	ID, Key, HTML string
}

// CacheHTML keeps the renderings of finished messages with them, in one
// statement; a message that changed since (another seq) keeps none.
func (db *DB) CacheHTML(ctx context.Context, ms []RenderedMessage) error {
	if len(ms) == 0 {
		return nil
	}
	ids, keys, htmls := make([]string, len(ms)), make([]string, len(ms)), make([]string, len(ms))
	for i, m := range ms {
		ids[i], keys[i], htmls[i] = m.ID, m.Key, m.HTML
	}
	_, err := db.pool.Exec(ctx, `
		update messages m set html = u.html, html_key = u.key
		from unnest($1::text[], $2::text[], $3::text[]) as u(id, key, html)
		where m.id = u.id and m.status <> 'streaming'`, ids, keys, htmls)
	return dbErr("keeping rendered messages", "message", err)
}
