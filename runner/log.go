package runner

import (
	"context"
	"log/slog"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/fanout"
	"github.com/toolmark/toolmark/store"
)

// storeLog is the fanout.Log of turns over the store: what every follower
// reads where the hub's memory does not reach.
type storeLog struct {
	db  *store.DB
	log *slog.Logger
}

// EventsAfter returns the committed events of turnID after the seq after.
func (l storeLog) EventsAfter(ctx context.Context, turnID string, after int64, limit int) ([]toolmark.Event, error) {
	return l.db.EventsAfter(ctx, turnID, after, limit)
}

// Snapshot returns the turn as of its newest committed event: its log, read
// in one transaction (store.TurnLog), replayed from the stored snapshot of
// its message. The stored content may lag the log (it is written at tool
// status changes, every few seconds and at the end) while the tool-call
// rows do not; replaying the events after it gives content, calls, todos
// and status that are all of one seq.
func (l storeLog) Snapshot(ctx context.Context, turnID string) (toolmark.SnapshotData, error) {
	lt, err := l.db.TurnLog(ctx, turnID)
	if err != nil {
		return toolmark.SnapshotData{}, err
	}
	st := stateOf(lt, l.log)
	return toolmark.SnapshotData{Content: st.Content(), Seq: lt.LastSeq(), Status: st.Status(),
		ToolCalls: st.Records(), Todos: st.Todos()}, nil
}

// Log returns the fanout.Log of the turns in db, for a Hub: the hub the
// runner makes when its Config names none is made with it.
func Log(db *store.DB, logger *slog.Logger) fanout.Log {
	if logger == nil {
		logger = slog.Default()
	}
	return storeLog{db: db, log: logger.With("component", "log")}
}
