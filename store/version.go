package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark"
)

// SelectVersion makes question id, a version of a question that an edit, a
// regeneration or a retry asked again, the conversation's version in its
// place, as ChatGPT's "‹ 1/2 ›" does: the branch from the question now in
// its place on (that question, the answers and questions after it) is
// marked replaced by id's turn, and id's own branch, as it was when it was
// replaced, becomes the conversation again; the model's history follows.
// Nothing is deleted, so the other branch can be chosen back the same way.
// A question already in the conversation is left as it is. While a turn of
// the conversation is active it is ECONFLICT; a question whose place is no
// longer in the conversation (an earlier question was asked again since)
// is ECONFLICT too.
func (db *DB) SelectVersion(ctx context.Context, ownerID, id string) (toolmark.Message, error) {
	var m toolmark.Message
	if !validID(id) || !validID(ownerID) {
		return m, notFound("message")
	}
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		var group string
		var active bool
		var reasoning []byte
		// The conversation's row lock orders this with turns being created.
		err := tx.QueryRow(ctx, `
			select `+messageColumns+`, coalesce(m.version_of, m.id),
				exists (select 1 from turns t where t.conversation_id = m.conversation_id and t.finished_at is null)
			from messages m join conversations c on c.id = m.conversation_id
			where m.id = $1 and c.owner_id = $2 and m.role = 'user'
			for update of c`, id, ownerID).Scan(
			&m.ID, &m.Pos, &m.ConversationID, &m.TurnID, &m.Role, &m.Content, &m.Status, &m.Seq, &m.CreatedAt, &m.UpdatedAt, &m.ReplacedBy,
			&reasoning, &group, &active)
		if err != nil {
			return dbErr("selecting version", "message", err)
		}
		if m.Reasoning, err = parseReasoning(reasoning); err != nil {
			return err
		}
		switch {
		case m.ReplacedBy == "":
			return nil
		case active:
			return toolmark.Errorf(toolmark.ECONFLICT, "an answer is being written in this conversation; stop it first")
		}
		var livePos int64
		err = tx.QueryRow(ctx, `
			select pos from messages
			where conversation_id = $1 and role = 'user' and replaced_by is null and (id = $2 or version_of = $2)`,
			m.ConversationID, group).Scan(&livePos)
		if errors.Is(err, pgx.ErrNoRows) {
			return toolmark.Errorf(toolmark.ECONFLICT, "this version's place is no longer in the conversation; choose the earlier question's version first")
		} else if err != nil {
			return dbErr("selecting version", "message", err)
		}
		if _, err := tx.Exec(ctx, `
			update messages set replaced_by = $3
			where conversation_id = $1 and replaced_by is null and pos >= $2`, m.ConversationID, livePos, m.TurnID); err != nil {
			return dbErr("selecting version", "message", err)
		}
		if _, err := tx.Exec(ctx, `
			update messages set replaced_by = null
			where conversation_id = $1 and replaced_by = $2`, m.ConversationID, m.ReplacedBy); err != nil {
			return dbErr("selecting version", "message", err)
		}
		m.ReplacedBy = ""
		return nil
	})
	return m, err
}
