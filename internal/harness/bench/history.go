package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/toolmark/toolmark/store"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// HistoryOwner is the name of the user whose conversations hold the
// history a bench writes (Config.History), apart from the bench's own.
const HistoryOwner = "bench-history"

// historyBatch is how many turns one statement of the history writes.
const historyBatch = 25_000

// historyTool is the tool of a history turn's two calls, the one the demo
// calls for the default question, and historySearch what they searched.
const (
	historyTool   = "search_documents"
	historySearch = "resume cancellation"
)

// historyAnswer is the content of a history turn's answer: about the size
// of the demo's (1.4 KiB), with its two tool calls' tags.
var historyAnswer = historyTag("call_1") + historyTag("call_2") +
	strings.Repeat("An earlier answer, as long as the demo's, with its sources and its steps. ", 17)

// historyTag is the finished tag of the history turn's call id.
func historyTag(id string) string {
	return toolcallmarkup.Markup(toolcallmarkup.ToolCall{ID: id, Type: historyTool, Status: toolcallmarkup.StatusSuccess,
		Attrs: []toolcallmarkup.Attr{{Key: "query", Value: historySearch}}})
}

// historySQL writes $2 finished turns of user $1, each in a conversation of
// its own with its two messages ($3, $4) and two calls of tool $6
// (arguments $7, result $5): the rows a turn leaves but for its events. The ids are made as the
// server makes them (time_ordered_id, sql/011), so the indexes grow as a
// deployment's do.
const historySQL = `
	with g as materialized (
		select time_ordered_id() as c, time_ordered_id() as t, time_ordered_id() as um, time_ordered_id() as am
		from generate_series(1, $2)
	), c as (
		insert into conversations (id, owner_id, title) select c, $1, 'An earlier conversation' from g
	), m as (
		insert into messages (id, conversation_id, turn_id, role, content, status)
		select um, c, t, 'user', $3, 'complete' from g
		union all
		select am, c, t, 'assistant', $4, 'complete' from g
	), tc as (
		insert into tool_calls (turn_id, id, name, arguments, status, result, started_at, finished_at)
		select g.t, k.id, $6, $7::json, 'success', $5, now(), now()
		from g cross join (values ('call_1'), ('call_2')) as k(id)
	)
	insert into turns (id, conversation_id, user_message_id, assistant_message_id, status, started_at, finished_at)
	select t, c, um, am, 'completed', now(), now() from g`

// writeHistory writes n finished turns into the bench's database (see
// Config.History), then vacuums and analyzes the tables and ends with a
// checkpoint, so that the first run starts on settled tables.
func (b *Bench) writeHistory(ctx context.Context, n int) error {
	db, err := store.Open(ctx, b.dbURL, store.WithMaxConns(1))
	if err != nil {
		return fmt.Errorf("writing the history: %w", err)
	}
	owner, err := db.EnsureUser(ctx, HistoryOwner)
	db.Close()
	if err != nil {
		return fmt.Errorf("writing the history: %w", err)
	}
	conn, err := b.stats.connect(ctx) // a started server's database always has its statistics read
	if err != nil {
		return fmt.Errorf("writing the history: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	args, err := json.Marshal(map[string]string{"query": historySearch})
	if err != nil {
		return err
	}
	start := time.Now()
	result := strings.Repeat(`{"source":"docs/resume.md","snippet":"…"}`, 8)
	for done := 0; done < n; {
		k := min(historyBatch, n-done)
		if _, err := conn.Exec(ctx, historySQL, owner.ID, k, b.cfg.Question, historyAnswer, result, historyTool, string(args)); err != nil {
			return fmt.Errorf("writing the history: %w", err)
		}
		done += k
		b.out.say("history: %d/%d earlier turns written, %s", done, n, time.Since(start).Round(time.Second))
	}
	b.out.say("history: vacuuming and analyzing, then a checkpoint")
	for _, sql := range []string{"vacuum analyze", "checkpoint"} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("settling the history (%s): %w", sql, err)
		}
	}
	return nil
}
