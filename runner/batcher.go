package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// batcher applies a turn's events to its document as they are emitted and
// persists them in batches: every BatchInterval, at once when BatchSize
// events wait or a tool's status changed. Followers are woken only after a
// batch is in the log, so no client sees an event a crash could lose.
type batcher struct {
	r    *Runner
	turn toolmark.Turn

	mu        sync.Mutex
	doc       *toolcallmarkup.Document
	pending   []store.EventInput
	saveDue   bool // content must be saved with the next batch
	calls     map[string]*toolmark.ToolCallRecord
	dirty     []string // ids of calls changed since the last batch
	todos     []toolmark.Todo
	todosDue  bool
	err       error // the first persistence error; later emits return it
	lastSave  time.Time
	lastSeq   int64
	flushMu   sync.Mutex // one batch at a time, in order
	wake      chan struct{}
	stop      chan struct{}
	loopEnded chan struct{}
}

func newBatcher(r *Runner, t toolmark.Turn) *batcher {
	doc, _ := toolcallmarkup.NewDocument("")
	b := &batcher{
		r: r, turn: t, doc: doc,
		calls:     make(map[string]*toolmark.ToolCallRecord),
		lastSave:  time.Now(),
		lastSeq:   t.LastSeq,
		wake:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		loopEnded: make(chan struct{}),
	}
	go b.loop()
	return b
}

func (b *batcher) loop() {
	defer close(b.loopEnded)
	t := time.NewTicker(b.r.cfg.BatchInterval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-b.wake:
		case <-t.C:
		}
		if _, _, err := b.flush(context.Background(), nil); err != nil {
			b.r.log.Error("persisting events", "turn", b.turn.ID, "err", err)
		}
	}
}

// close stops the background flushes; later batches are written by
// explicit flushes only. It may be called more than once.
func (b *batcher) close() {
	select {
	case <-b.stop:
	default:
		close(b.stop)
	}
	<-b.loopEnded
}

// emit is the EmitFunc handed to the agent. It never blocks on the
// database; it fails once persisting has failed, which stops the agent.
func (b *batcher) emit(_ context.Context, e Event) error {
	data, err := marshalData(e.Data)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return b.err
	}
	if td, ok := e.Data.(toolmark.TextDeltaData); ok && e.Type == toolmark.EventTextDelta {
		// The hot path, once per streamed chunk: no JSON round trip.
		b.doc.AppendNeutralised(td.Text)
	} else if err := store.ApplyEvent(b.doc, toolmark.Event{Type: e.Type, Data: data}); err != nil {
		return fmt.Errorf("applying %s: %w", e.Type, err)
	}
	urgent := false
	switch e.Type {
	case toolmark.EventToolCallStarted, toolmark.EventToolCallRunning, toolmark.EventToolCallSuccess, toolmark.EventToolCallError:
		b.record(e.Type, data, now)
		b.saveDue, urgent = true, true
	case toolmark.EventToolCallDelta:
		b.record(e.Type, data, now)
	case toolmark.EventTodoUpdate:
		var d toolmark.TodoUpdateData
		if json.Unmarshal(data, &d) == nil {
			b.todos, b.todosDue, urgent = d.Todos, true, true
		}
	case toolmark.EventTurnCompleted, toolmark.EventTurnFailed, toolmark.EventTurnCancelled:
		b.saveDue, urgent = true, true
	}
	b.pending = append(b.pending, store.EventInput{Type: e.Type, Data: data, Time: now})
	if urgent || len(b.pending) >= b.r.cfg.BatchSize {
		select {
		case b.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// record keeps the tool-call row of a tool_call_* event up to date.
func (b *batcher) record(typ toolmark.EventType, data json.RawMessage, now time.Time) {
	var d toolmark.ToolCallData
	if json.Unmarshal(data, &d) != nil || d.ToolCallID == "" {
		return
	}
	rec, ok := b.calls[d.ToolCallID]
	if !ok {
		rec = &toolmark.ToolCallRecord{ID: d.ToolCallID, TurnID: b.turn.ID, ParentID: d.ParentID, Name: d.Name, StartedAt: now}
		b.calls[d.ToolCallID] = rec
	}
	if d.Status != "" {
		rec.Status = d.Status
	}
	if d.Arguments != nil {
		if raw, err := json.Marshal(d.Arguments); err == nil {
			rec.Arguments = raw
		}
	}
	if d.Result != "" {
		rec.Result = d.Result
	}
	if d.Error != "" {
		rec.Error = d.Error
	}
	if typ == toolmark.EventToolCallSuccess || typ == toolmark.EventToolCallError {
		t := now
		rec.FinishedAt = &t
	}
	for _, id := range b.dirty {
		if id == d.ToolCallID {
			return
		}
	}
	b.dirty = append(b.dirty, d.ToolCallID)
}

// emitNow emits one event and persists it before returning.
func (b *batcher) emitNow(ctx context.Context, typ toolmark.EventType, data any) error {
	if err := b.emit(ctx, Event{Type: typ, Data: data}); err != nil {
		return err
	}
	_, _, err := b.flush(ctx, nil)
	return err
}

// closeOpenTags gives every tag that is not final the status s, through
// ordinary events, so the log, the rows and the content agree.
func (b *batcher) closeOpenTags(ctx context.Context, s toolcallmarkup.Status, errText string) {
	b.mu.Lock()
	var open []toolcallmarkup.ToolCall
	for _, tc := range b.doc.Calls() {
		if !tc.Status.Final() {
			open = append(open, tc)
		}
	}
	b.mu.Unlock()
	if errText == "" {
		errText = "the turn ended before the tool finished"
	}
	for _, tc := range open {
		tc.Status, tc.Error = s, errText
		_ = b.emit(ctx, Event{Type: toolmark.EventToolCallError, Data: toolmark.ToolCallData{
			ToolCallID: tc.ID, ParentID: tc.ParentID, Name: tc.Type, Status: string(s),
			Markup: toolcallmarkup.OpenTag(tc), Error: errText,
		}})
	}
}

// flushFinal persists everything pending and ends the turn with it.
func (b *batcher) flushFinal(ctx context.Context, fin store.Finish) (string, int64, error) {
	return b.flush(ctx, &fin)
}

// flush persists the pending events as one batch, with the content when a
// tool status changed, SaveInterval passed or the turn ends (fin), and the
// changed tool-call rows and todos; then it wakes the followers.
func (b *batcher) flush(ctx context.Context, fin *store.Finish) (string, int64, error) {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	b.mu.Lock()
	if b.err != nil {
		err := b.err
		b.mu.Unlock()
		return "", 0, err
	}
	batch := store.Batch{TurnID: b.turn.ID, MessageID: b.turn.AssistantMessageID, Events: b.pending, LastSeq: b.lastSeq, Finish: fin}
	b.pending = nil
	var content string
	if fin != nil || b.saveDue || (len(batch.Events) > 0 && time.Since(b.lastSave) >= b.r.cfg.SaveInterval) {
		content = b.doc.String()
		batch.Content = &content
		b.saveDue = false
	}
	for _, id := range b.dirty {
		batch.ToolCalls = append(batch.ToolCalls, *b.calls[id])
	}
	b.dirty = nil
	if b.todosDue {
		todos := append([]toolmark.Todo{}, b.todos...)
		batch.Todos = &todos
		b.todosDue = false
	}
	b.mu.Unlock()

	if len(batch.Events) == 0 && fin == nil && batch.Content == nil && len(batch.ToolCalls) == 0 && batch.Todos == nil {
		return content, b.lastSeq, nil
	}
	start := time.Now()
	last, err := b.r.cfg.Store.PersistBatch(ctx, batch)
	if err != nil {
		b.mu.Lock()
		b.err = fmt.Errorf("persisting the turn's events: %w", err)
		b.mu.Unlock()
		return "", 0, err
	}
	b.lastSeq = last
	if batch.Content != nil {
		b.lastSave = time.Now()
	}
	b.r.cfg.Metrics.BatchPersisted(len(batch.Events), time.Since(start))
	b.r.hub.Publish(b.turn.ID, last)
	return content, last, nil
}
