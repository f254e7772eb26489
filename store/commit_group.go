package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark"
)

// A group commit writes each table in one statement over arrays (unnest),
// whatever the number of turns. commitGroup gathers the writes of a group
// table by table; each table's columns add a turn's write and queue their
// one statement.
//
// A group is used again (groups): its event columns, the numbers the guard
// read and the COPY buffer keep their room from one commit to the next, so
// that a commit allocates about nothing of its own for the rows of its
// events, however many.
type commitGroup struct {
	events   eventCols
	passed   map[string]int64 // the turns the events' guard let through, with their numbers
	copyBuf  []byte           // copyData's buffer
	calls    toolCallCols
	todos    todoCols
	contents contentCols
	started  texts
	finishes finishCols
	handOver handOverCols
	notes    noteCols
}

// groups are the commit groups not in use (see commitGroup).
var groups = sync.Pool{New: func() any { return &commitGroup{passed: map[string]int64{}} }}

// newCommitGroup returns a group of ws's writes; release gives it back once
// its commit ended.
func newCommitGroup(ws []TurnWrite, announce bool) (*commitGroup, error) {
	g := groups.Get().(*commitGroup)
	n := 0
	for _, w := range ws {
		n += len(w.Events)
	}
	g.events.grow(n)
	for _, w := range ws {
		g.events.add(w)
		if w.Started {
			g.started = append(g.started, w.TurnID)
		}
		var err error
		switch {
		case w.Finish != nil:
			err = g.finishes.add(w)
		case w.Content != nil:
			err = g.contents.add(w)
		}
		if err != nil {
			return nil, err
		}
		if w.HandOver > 0 && w.Finish == nil {
			g.handOver.add(w)
		}
		g.calls.add(w)
		if err := g.todos.add(w); err != nil {
			return nil, err
		}
		if announce {
			g.notes.add(w)
		}
	}
	return g, nil
}

// maxKeptCopy bounds the COPY buffer a group keeps for the next commit (a
// commit saving a long message may need far more, once).
const maxKeptCopy = 1 << 20

// release gives g back to groups, holding nothing of the commit: the event
// columns are cleared to their capacity (the rows' data and ids may be
// collected), the other tables' columns, rarely large, dropped.
func (g *commitGroup) release() {
	g.events.reset()
	clear(g.passed)
	buf := g.copyBuf[:0]
	if cap(buf) > maxKeptCopy {
		buf = nil
	}
	*g = commitGroup{events: g.events, passed: g.passed, copyBuf: buf}
	groups.Put(g)
}

// queue queues the group's statements on b, in the order the guard needs
// (the lease given up last); once the batch ran, g.passed holds the
// numbers of the turns whose events the guard let through.
func (g *commitGroup) queue(b *pgx.Batch, owner string) {
	g.events.queue(b, owner, g.passed)
	g.calls.queue(b, owner)
	g.todos.queue(b, owner)
	g.contents.queue(b, owner)
	if len(g.started) > 0 {
		b.Queue(`
			update turns t set status = 'running', started_at = coalesce(started_at, now())
			where t.id = any($2) and case when t.status = 'queued' then t.lease_owner end = $1`, owner, g.started)
	}
	g.finishes.queue(b, owner)
	g.handOver.queue(b, owner) // last: the statements above check the lease this one gives up
	g.notes.queue(b)
}

// eventCols are the rows of the commit's events (see severalEvents).
type eventCols struct {
	turn texts
	typ  []int16  // the rows' types (storedForm)
	data [][]byte // sent as text[]: the events' JSON as it is, not copied into strings
	seq  []int64
	time []time.Time
}

// grow makes room for n more events.
func (c *eventCols) grow(n int) {
	c.turn, c.typ, c.data = slices.Grow(c.turn, n), slices.Grow(c.typ, n), slices.Grow(c.data, n)
	c.seq, c.time = slices.Grow(c.seq, n), slices.Grow(c.time, n)
}

// reset empties c, keeping its room, and drops what its rows pointed to.
func (c *eventCols) reset() {
	clear(c.turn[:cap(c.turn)])
	clear(c.data[:cap(c.data)])
	c.turn, c.typ, c.data, c.seq, c.time = c.turn[:0], c.typ[:0], c.data[:0], c.seq[:0], c.time[:0]
}

// add adds the rows of w's events, whose types checkWrite found numbered.
func (c *eventCols) add(w TurnWrite) {
	for evs := w.Events; len(evs) > 0; {
		n := eventRun(evs)
		typ, data := severalEvents, []byte(nil)
		if n == 1 {
			typ, data = storedForm(evs[0])
		} else {
			data = appendSeveral(nil, evs[:n])
		}
		c.turn, c.seq, c.typ = append(c.turn, w.TurnID), append(c.seq, evs[n-1].Seq), append(c.typ, typ)
		c.data, c.time = append(c.data, data), append(c.time, evs[0].Time)
		evs = evs[n:]
	}
}

// copyFrom is the number of event rows from which a commit writes them
// with COPY instead of INSERT. PostgreSQL then logs the rows that go on one
// page as one WAL record (a multi-insert) instead of a record each: about
// 45 bytes less a row, 3.5 KB of a demo turn's 71 rows. But COPY is a
// command of its own, after the batch, as it needs the turns' numbers the
// guard reads: a second round trip, which a commit of a few rows (an idle
// server's, one event each) would wait for longer than it saves.
const copyFrom = 32

// queue queues the events' write, guarded by the lease: one statement reads
// the row of each of the commit's turns once (eventsGuard: by primary key,
// in one scan of the index, whatever the statistics) and keeps the number
// (the events table's key, see sql/008) of those owner still leases. A
// commit of fewer than copyFrom rows inserts them in the same statement; a
// larger one leaves them for copyData, after the batch. Once the batch ran,
// passed holds the numbers of the turns the guard let through.
func (c *eventCols) queue(b *pgx.Batch, owner string, passed map[string]int64) {
	if len(c.turn) == 0 {
		return
	}
	scan := func(rows pgx.Rows) error {
		var id string
		var num int64
		dst := []any{&id, &num} // once a commit, not once a turn
		for rows.Next() {
			if err := rows.Scan(dst...); err != nil {
				return err
			}
			passed[id] = num
		}
		return rows.Err()
	}
	if c.copies() {
		b.Queue(eventsGuardSQL, owner, c.turn).Query(scan)
	} else {
		b.Queue(eventsInsertSQL, owner, c.turn, c.seq, c.typ, c.data, c.time).Query(scan)
	}
}

// copies reports whether the rows go in by COPY after the batch (copyFrom).
func (c *eventCols) copies() bool { return len(c.turn) >= copyFrom }

// eventsGuard is the guard of the events: the number of each of the
// commit's turns ($2, a turn once per row) that owner ($1) still leases.
// It looks the turns up by their primary key with the array itself (= any:
// PostgreSQL sorts the ids, drops the repeated ones and reads each once), in
// one scan of the index (docs/performance.md times it against a subquery
// per turn). The condition on the owner is the CASE of leasedOwner, which
// no partial index of turns matches, so that a generic plan made on a new
// database keeps to the key (TestGenericPlansUseKeys). It is materialized:
// eventsInsertSQL's insert and its answer read the same turns, looked up
// once.
var eventsGuard = `
	with ok as materialized (
		select g.id, g.num from turns g where g.id = any($2::text[]) and ` + leasedOwner("g") + ` = $1
	)`

// eventsGuardSQL returns the turns the guard lets through with their
// numbers; eventsInsertSQL also inserts their events.
var (
	eventsGuardSQL  = eventsGuard + ` select id, num from ok`
	eventsInsertSQL = eventsGuard + `, ins as (
		insert into events (turn, time, seq, type, data)
		select ok.num, u.time, u.seq, u.type, u.data::json
		from unnest($2::text[], $3::int[], $4::smallint[], $5::text[], $6::timestamptz[]) as u(turn_id, seq, type, data, time)
		join ok on ok.id = u.turn_id
	)
	select id, num from ok`
)

// copyEvents is the COPY of copyData. The data is encoded here, not by
// pgx.Conn.CopyFrom: that builds its own COPY statement, to which the
// commit's COMMIT cannot be joined (a third round trip), and describes the
// table once per connection; the five fields' binary forms are fixed.
const copyEvents = `copy events (turn, time, seq, type, data) from stdin (format binary)`

// pgEpoch is where PostgreSQL's binary timestamps count from, in Unix
// microseconds.
const pgEpoch = 946684800000000

// copyData appends to dst, in PostgreSQL's binary COPY format, the rows
// whose turns the guard let through (num: their numbers), and returns it
// with how many rows it holds. Each field is a 32-bit length and the
// value: the time in microseconds from pgEpoch, json as its text.
func (c *eventCols) copyData(dst []byte, num map[string]int64) ([]byte, int) {
	size := 11 + 8 + 2
	for _, d := range c.data {
		size += 2 + 4*5 + 8 + 8 + 4 + 2 + len(d)
	}
	dst = slices.Grow(dst, size)
	dst = append(dst, "PGCOPY\n\xff\r\n\x00"...)
	dst = binary.BigEndian.AppendUint64(dst, 0) // no flags, no header extension
	n := 0
	for i, id := range c.turn {
		turn, ok := num[id]
		if !ok {
			continue
		}
		dst = binary.BigEndian.AppendUint16(dst, 5)
		dst = binary.BigEndian.AppendUint32(dst, 8)
		dst = binary.BigEndian.AppendUint64(dst, uint64(turn))
		dst = binary.BigEndian.AppendUint32(dst, 8)
		dst = binary.BigEndian.AppendUint64(dst, uint64(c.time[i].UnixMicro()-pgEpoch))
		dst = binary.BigEndian.AppendUint32(dst, 4)
		dst = binary.BigEndian.AppendUint32(dst, uint32(c.seq[i])) // checkWrite: 1 to MaxInt32
		dst = binary.BigEndian.AppendUint32(dst, 2)
		dst = binary.BigEndian.AppendUint16(dst, uint16(c.typ[i]))
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(c.data[i])))
		dst = append(dst, c.data[i]...)
		n++
	}
	return binary.BigEndian.AppendUint16(dst, 0xffff), n // the trailer: -1
}

type toolCallCols struct {
	turn, id, parent, name, status, result, error texts
	args                                          []*string
	start                                         []time.Time
	end                                           []*time.Time
}

func (c *toolCallCols) add(w TurnWrite) {
	for _, r := range w.ToolCalls {
		status := r.Status
		if status == "" {
			status = "pending"
		}
		var args *string
		if len(r.Arguments) > 0 {
			a := string(r.Arguments)
			args = &a
		}
		start := r.StartedAt
		if start.IsZero() {
			start = time.Now()
		}
		c.turn, c.id, c.parent = append(c.turn, w.TurnID), append(c.id, r.ID), append(c.parent, r.ParentID)
		c.name, c.status, c.result = append(c.name, r.Name), append(c.status, status), append(c.result, r.Result)
		c.error, c.args, c.start, c.end = append(c.error, r.Error), append(c.args, args), append(c.start, start), append(c.end, r.FinishedAt)
	}
}

// queue queues the write of the rows: a row is updated in place, the
// stored arguments kept when none are given, and a final status (success,
// error, cancelled) never changes: the first final outcome wins. A row not
// there yet is inserted. The update and the insert are one statement, and
// not an insert's ON CONFLICT: that locks the row it updates (a WAL record)
// and confirms each row it inserts (another), and a tool call's row is
// written about four times. Only one replica writes a turn's rows (its
// lease); were two to insert the same row at once, one would fail on the
// key, and its commit be retried (Transient).
func (c *toolCallCols) queue(b *pgx.Batch, owner string) {
	if len(c.turn) == 0 {
		return
	}
	b.Queue(toolCallsSQL, owner, c.turn, c.id, c.parent, c.name, c.args, c.status, c.result, c.error, c.start, c.end)
}

// toolCallsSQL is the statement of toolCallCols.queue, built once.
var toolCallsSQL = `
		with u as (
			select * from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::timestamptz[], $11::timestamptz[])
				as u(turn_id, id, parent_id, name, arguments, status, result, error, started_at, finished_at)
			where ` + guard + `
		), changed as (
			update tool_calls c set parent_id = u.parent_id, name = u.name, arguments = coalesce(u.arguments::json, c.arguments),
				status = u.status, result = u.result, error = u.error, finished_at = u.finished_at
			from u where c.turn_id = u.turn_id and c.id = u.id and c.status not in ('success', 'error', 'cancelled')
		)
		insert into tool_calls (turn_id, id, parent_id, name, arguments, status, result, error, started_at, finished_at)
		select u.turn_id, u.id, u.parent_id, u.name, u.arguments::json, u.status, u.result, u.error, u.started_at, u.finished_at
		from u where not exists (select from tool_calls c where c.turn_id = u.turn_id and c.id = u.id)`

type todoCols struct{ turn, todos texts }

func (c *todoCols) add(w TurnWrite) error {
	if w.Todos == nil {
		return nil
	}
	todos := *w.Todos
	if todos == nil {
		todos = []toolmark.Todo{}
	}
	raw, err := json.Marshal(todos)
	if err != nil {
		return fmt.Errorf("encoding todos: %w", err)
	}
	c.turn, c.todos = append(c.turn, w.TurnID), append(c.todos, string(raw))
	return nil
}

func (c *todoCols) queue(b *pgx.Batch, owner string) {
	if len(c.turn) == 0 {
		return
	}
	b.Queue(todosSQL, owner, c.turn, c.todos)
}

// todosSQL writes the task lists as toolCallsSQL the tool calls' rows: an
// update, else an insert.
var todosSQL = `
		with u as (
			select * from unnest($2::text[], $3::text[]) as u(turn_id, todos) where ` + guard + `
		), changed as (
			update todos d set todos = u.todos::json, updated_at = now() from u where d.turn_id = u.turn_id
		)
		insert into todos (turn_id, todos)
		select u.turn_id, u.todos::json from u where not exists (select from todos d where d.turn_id = u.turn_id)`

// contentCols are the contents of messages whose turn goes on.
type contentCols struct {
	turn, msg, content, reasoning texts
	seq                           []int64
}

func (c *contentCols) add(w TurnWrite) error {
	r, err := reasoningJSON(w.Reasoning)
	if err != nil {
		return err
	}
	c.turn, c.msg, c.content, c.seq = append(c.turn, w.TurnID), append(c.msg, w.MessageID), append(c.content, *w.Content), append(c.seq, w.lastSeq())
	c.reasoning = append(c.reasoning, r)
	return nil
}

func (c *contentCols) queue(b *pgx.Batch, owner string) {
	if len(c.turn) == 0 {
		return
	}
	b.Queue(`
		update messages m set content = u.content, seq = u.seq, updated_at = now(),
			reasoning = coalesce(nullif(u.reasoning, '')::jsonb, m.reasoning)
		from unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[]) as u(turn_id, id, content, seq, reasoning)
		where m.id = u.id and m.seq <= u.seq
		  and (select `+leasedOwner("g")+` from turns g where g.id = u.turn_id and g.assistant_message_id = u.id) = $1`,
		owner, c.turn, c.msg, c.content, c.seq, c.reasoning)
}

// finishCols are the ends of turns: the turn's final status and its
// message's final content, in one statement — the one place a turn ends,
// whether it ended live, was cancelled or was swept.
type finishCols struct {
	turn, status, error, content, msgStatus, reasoning texts
	seq, in, out                                       []int64
}

func (c *finishCols) add(w TurnWrite) error {
	r, err := reasoningJSON(w.Reasoning)
	if err != nil {
		return err
	}
	c.reasoning = append(c.reasoning, r)
	f := w.Finish
	c.turn, c.status, c.error = append(c.turn, w.TurnID), append(c.status, string(f.Status)), append(c.error, f.Error)
	c.content, c.seq = append(c.content, *w.Content), append(c.seq, w.lastSeq())
	c.msgStatus = append(c.msgStatus, string(f.Status.MessageStatus()))
	c.in, c.out = append(c.in, f.Usage.InputTokens), append(c.out, f.Usage.OutputTokens)
	return nil
}

func (c *finishCols) queue(b *pgx.Batch, owner string) {
	if len(c.turn) == 0 {
		return
	}
	b.Queue(`
		with u as (
			select * from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::bigint[], $9::bigint[], $10::text[])
				as u(id, status, error, content, seq, msg_status, input_tokens, output_tokens, reasoning)
		), t as (
			update turns set status = u.status, error = u.error, finished_at = now(), last_seq = u.seq,
				lease_owner = null, lease_expires_at = null, input_tokens = u.input_tokens, output_tokens = u.output_tokens
			from u where turns.id = u.id and turns.id = any($2) and `+leasedOwner("turns")+` = $1
			returning turns.id, turns.assistant_message_id
		)
		update messages m set content = u.content, seq = u.seq, status = u.msg_status, updated_at = now(),
			reasoning = coalesce(nullif(u.reasoning, '')::jsonb, m.reasoning)
		from t join u on u.id = t.id where m.id = t.assistant_message_id`,
		owner, c.turn, c.status, c.error, c.content, c.seq, c.msgStatus, c.in, c.out, c.reasoning)
}

type handOverCols struct {
	turn texts
	ttl  []time.Duration
}

func (c *handOverCols) add(w TurnWrite) {
	c.turn, c.ttl = append(c.turn, w.TurnID), append(c.ttl, w.HandOver)
}

func (c *handOverCols) queue(b *pgx.Batch, owner string) {
	if len(c.turn) == 0 {
		return
	}
	b.Queue(`
		update turns t set lease_owner = null, lease_expires_at = now() + u.ttl
		from unnest($2::text[], $3::interval[]) as u(id, ttl)
		where t.id = u.id and t.id = any($2) and `+leasedOwner("t")+` = $1`, owner, c.turn, c.ttl)
}

// maxNotifyPayload keeps a notification under PostgreSQL's 8000-byte limit.
const maxNotifyPayload = 7000

// noteCols are the notifications on ChannelEvents: "turn:seq" items,
// comma-separated, one notification per maxNotifyPayload bytes.
type noteCols struct {
	notes []string
	note  strings.Builder
}

func (c *noteCols) add(w TurnWrite) {
	item := w.TurnID + ":" + strconv.FormatInt(w.lastSeq(), 10)
	if c.note.Len()+len(item)+1 > maxNotifyPayload {
		c.notes = append(c.notes, c.note.String())
		c.note.Reset()
	}
	if c.note.Len() > 0 {
		c.note.WriteByte(',')
	}
	c.note.WriteString(item)
}

func (c *noteCols) queue(b *pgx.Batch) {
	notes := c.notes
	if c.note.Len() > 0 {
		notes = append(notes, c.note.String())
	}
	if len(notes) == 0 {
		return
	}
	b.Queue(`select pg_notify('`+ChannelEvents+`', p) from unnest($1::text[]) as p`, notes)
}
