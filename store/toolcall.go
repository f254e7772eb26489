package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark"
)

const toolCallColumns = `turn_id, id, parent_id, name, arguments, status, result, error, started_at, finished_at`

func scanToolCall(row pgx.Row) (toolmark.ToolCallRecord, error) {
	var r toolmark.ToolCallRecord
	var args []byte
	err := row.Scan(&r.TurnID, &r.ID, &r.ParentID, &r.Name, &args, &r.Status, &r.Result, &r.Error, &r.StartedAt, &r.FinishedAt)
	if args != nil {
		r.Arguments = json.RawMessage(args)
	}
	return r, err
}

func collectToolCalls(rows pgx.Rows) ([]toolmark.ToolCallRecord, error) {
	rs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (toolmark.ToolCallRecord, error) { return scanToolCall(r) })
	if rs == nil && err == nil {
		rs = []toolmark.ToolCallRecord{}
	}
	return rs, err
}

// ToolCalls returns the tool-call records of a turn in the order they
// started.
func (db *DB) ToolCalls(ctx context.Context, turnID string) ([]toolmark.ToolCallRecord, error) {
	if !validID(turnID) {
		return nil, notFound("turn")
	}
	return toolCalls(ctx, db.pool, turnID)
}

func toolCalls(ctx context.Context, q querier, turnID string) ([]toolmark.ToolCallRecord, error) {
	rows, err := q.Query(ctx, `select `+toolCallColumns+` from tool_calls where turn_id = $1 order by started_at, id`, turnID)
	if err != nil {
		return nil, fmt.Errorf("listing tool calls: %w", err)
	}
	rs, err := collectToolCalls(rows)
	if err != nil {
		return nil, fmt.Errorf("listing tool calls: %w", err)
	}
	return rs, nil
}

// Todos returns the task list of a turn; empty when none was set.
func (db *DB) Todos(ctx context.Context, turnID string) ([]toolmark.Todo, error) {
	if !validID(turnID) {
		return nil, notFound("turn")
	}
	return todosOf(ctx, db.pool, turnID)
}

func todosOf(ctx context.Context, q querier, turnID string) ([]toolmark.Todo, error) {
	var raw []byte
	err := q.QueryRow(ctx, `
		select coalesce(d.todos, '[]'::json) from turns t left join todos d on d.turn_id = t.id
		where t.id = $1`, turnID).Scan(&raw)
	if err != nil {
		return nil, dbErr("reading todos", "turn", err)
	}
	todos := []toolmark.Todo{}
	if err := json.Unmarshal(raw, &todos); err != nil {
		return nil, fmt.Errorf("decoding todos: %w", err)
	}
	return todos, nil
}
