package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark"
)

// maxTitleBytes limits conversation titles.
const maxTitleBytes = 500

const conversationColumns = `id, owner_id, title, summary, model, created_at, updated_at`

func scanConversation(row pgx.Row) (toolmark.Conversation, error) {
	var c toolmark.Conversation
	err := row.Scan(&c.ID, &c.OwnerID, &c.Title, &c.Summary, &c.Model, &c.CreatedAt, &c.UpdatedAt)
	return c, err
}

// CreateConversation creates an empty conversation owned by ownerID. An
// unknown owner is ENOTFOUND.
func (db *DB) CreateConversation(ctx context.Context, ownerID, title string) (toolmark.Conversation, error) {
	if err := checkText("title", title, maxTitleBytes, false); err != nil {
		return toolmark.Conversation{}, err
	}
	if !validID(ownerID) {
		return toolmark.Conversation{}, notFound("user")
	}
	c, err := scanConversation(db.pool.QueryRow(ctx, `
		insert into conversations (owner_id, title) values ($1, $2)
		returning `+conversationColumns, ownerID, title))
	if err != nil {
		return toolmark.Conversation{}, dbErr("creating conversation", "user", err)
	}
	return c, nil
}

// EnsureConversation returns the owner's conversation id, creating it
// with title when no conversation has that id: the id a client chose (an
// AI SDK chat id, an AG-UI thread id). Another owner's conversation of that
// id is ENOTFOUND.
func (db *DB) EnsureConversation(ctx context.Context, ownerID, id, title string) (toolmark.Conversation, error) {
	if err := checkText("title", title, maxTitleBytes, false); err != nil {
		return toolmark.Conversation{}, err
	}
	if !validID(id) || !validID(ownerID) {
		return toolmark.Conversation{}, notFound("conversation")
	}
	_, err := db.pool.Exec(ctx, `
		insert into conversations (id, owner_id, title) values ($1, $2, $3)
		on conflict (id) do nothing`, id, ownerID, title)
	if err != nil {
		return toolmark.Conversation{}, dbErr("creating conversation", "user", err)
	}
	return db.GetConversation(ctx, ownerID, id)
}

// ListConversations returns the owner's conversations, most recently
// updated first (a new turn updates a conversation).
func (db *DB) ListConversations(ctx context.Context, ownerID string) ([]toolmark.Conversation, error) {
	if !validID(ownerID) {
		return []toolmark.Conversation{}, nil
	}
	rows, err := db.pool.Query(ctx, `
		select `+conversationColumns+` from conversations
		where owner_id = $1
		order by updated_at desc, id`, ownerID)
	if err != nil {
		return nil, dbErr("listing conversations", "conversation", err)
	}
	cs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (toolmark.Conversation, error) { return scanConversation(r) })
	if err != nil {
		return nil, dbErr("listing conversations", "conversation", err)
	}
	if cs == nil {
		cs = []toolmark.Conversation{}
	}
	return cs, nil
}

// GetConversation returns one of the owner's conversations.
func (db *DB) GetConversation(ctx context.Context, ownerID, id string) (toolmark.Conversation, error) {
	if !validID(id) || !validID(ownerID) {
		return toolmark.Conversation{}, notFound("conversation")
	}
	c, err := scanConversation(db.pool.QueryRow(ctx, `
		select `+conversationColumns+` from conversations
		where id = $1 and owner_id = $2`, id, ownerID))
	if err != nil {
		return toolmark.Conversation{}, dbErr("getting conversation", "conversation", err)
	}
	return c, nil
}

// DeleteConversation deletes one of the owner's conversations with its
// messages, turns, events and tool calls. It is ECONFLICT while a turn of
// the conversation is queued or running.
func (db *DB) DeleteConversation(ctx context.Context, ownerID, id string) error {
	if !validID(id) || !validID(ownerID) {
		return notFound("conversation")
	}
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		var active bool
		err := tx.QueryRow(ctx, `
			select exists (select 1 from turns t where t.conversation_id = c.id and t.finished_at is null)
			from conversations c where c.id = $1 and c.owner_id = $2
			for update of c`, id, ownerID).Scan(&active)
		if err != nil {
			return err
		}
		if active {
			return toolmark.Errorf(toolmark.ECONFLICT, "a turn of the conversation is still active")
		}
		_, err = tx.Exec(ctx, `delete from conversations where id = $1`, id)
		return err
	})
	return dbErr("deleting conversation", "conversation", err)
}

// SetConversationSummary stores the compacted history of a conversation's
// oldest turns.
func (db *DB) SetConversationSummary(ctx context.Context, ownerID, id, summary string) error {
	if !validID(id) || !validID(ownerID) {
		return notFound("conversation")
	}
	if err := checkText("summary", summary, db.maxContent, false); err != nil {
		return err
	}
	tag, err := db.pool.Exec(ctx, `
		update conversations set summary = $3, updated_at = now()
		where id = $1 and owner_id = $2`, id, ownerID, summary)
	if err != nil {
		return dbErr("setting conversation summary", "conversation", err)
	}
	if tag.RowsAffected() == 0 {
		return notFound("conversation")
	}
	return nil
}

const messageColumns = `m.id, m.pos, m.conversation_id, coalesce(m.turn_id, ''), m.role, m.content, m.status, m.seq, m.created_at, m.updated_at, coalesce(m.replaced_by, ''), m.reasoning`

func scanMessage(row pgx.Row) (toolmark.Message, error) {
	var m toolmark.Message
	var reasoning []byte
	err := row.Scan(&m.ID, &m.Pos, &m.ConversationID, &m.TurnID, &m.Role, &m.Content, &m.Status, &m.Seq, &m.CreatedAt, &m.UpdatedAt, &m.ReplacedBy, &reasoning)
	if err == nil {
		m.Reasoning, err = parseReasoning(reasoning)
	}
	return m, err
}

// ListMessages returns the messages of one of the owner's conversations,
// oldest first. An assistant message still being written holds the content
// last saved, which reflects the turn's events up to its Seq.
func (db *DB) ListMessages(ctx context.Context, ownerID, conversationID string) ([]toolmark.Message, error) {
	if !validID(conversationID) || !validID(ownerID) {
		return nil, notFound("conversation")
	}
	rows, err := db.pool.Query(ctx, `
		select `+messageColumns+`
		from conversations c join messages m on m.conversation_id = c.id
		where c.id = $1 and c.owner_id = $2 and m.replaced_by is null
		order by m.pos`, conversationID, ownerID)
	if err != nil {
		return nil, dbErr("listing messages", "conversation", err)
	}
	ms, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (toolmark.Message, error) { return scanMessage(r) })
	if err != nil {
		return nil, dbErr("listing messages", "conversation", err)
	}
	if len(ms) == 0 {
		// No messages yet, or no such conversation for this owner.
		if _, err := db.GetConversation(ctx, ownerID, conversationID); err != nil {
			return nil, err
		}
		ms = []toolmark.Message{}
	}
	return ms, nil
}
