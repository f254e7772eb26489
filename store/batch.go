package store

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/toolmark/toolmark"
)

// Batch is what a turn's runner persists at once.
type Batch struct {
	TurnID    string
	MessageID string // the turn's assistant message
	Events    []EventInput
	// Content, when not nil, is the message content after Events; it is
	// saved with the seq of the last event (LastSeq when Events is empty).
	Content *string
	LastSeq int64
	// Finish, when not nil, ends the turn with the batch (Content is then
	// required): the terminal event and the final content commit together.
	Finish    *Finish
	ToolCalls []toolmark.ToolCallRecord // rows to create or update
	Todos     *[]toolmark.Todo          // the task list, when it changed
}

// Finish is the end of a turn.
type Finish struct {
	Status toolmark.TurnStatus
	Error  string
}

// PersistBatch writes a batch and returns the seq of its last event (or
// LastSeq when it has none). The tool-call rows and todos are written
// first; then the events, the content and the turn's end commit in one
// transaction, so the notification that wakes followers fires only once
// the content they may fetch reflects every event they were sent.
func (db *DB) PersistBatch(ctx context.Context, b Batch) (int64, error) {
	for _, c := range b.ToolCalls {
		if err := db.UpsertToolCall(ctx, c); err != nil {
			return 0, err
		}
	}
	if b.Todos != nil {
		if err := db.SetTodos(ctx, b.TurnID, *b.Todos); err != nil {
			return 0, err
		}
	}
	if b.Finish != nil && b.Content == nil {
		return 0, toolmark.Errorf(toolmark.EINVALID, "finishing a turn needs its final content")
	}
	last := b.LastSeq
	if len(b.Events) == 0 && b.Content == nil {
		return last, nil
	}
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		if len(b.Events) > 0 {
			evs, err := db.appendEvents(ctx, tx, b.TurnID, b.MessageID, b.Events)
			if err != nil {
				return err
			}
			last = evs[len(evs)-1].Seq
		}
		switch {
		case b.Finish != nil:
			return db.finishTurn(ctx, tx, b.TurnID, b.Finish.Status, b.Finish.Error, *b.Content, last)
		case b.Content != nil:
			return db.saveContent(ctx, tx, b.MessageID, *b.Content, last)
		}
		return nil
	})
	return last, err
}
