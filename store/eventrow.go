package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/toolmark/toolmark"
)

// A row of the events table holds the events of a turn that one group
// commit wrote, as long as their seqs follow each other. One event is
// stored as itself: its type's number and its data. Several are one row of
// type severalEvents, whose data is the JSON array
//
//	[[type number, microseconds after the row's time, data], …]
//
// with the row's seq that of its last event and its time that of its first.
// A row costs a heap record and a key entry whatever it holds: under load
// about one event of a demo turn in five is committed with others of its
// turn (a tool call's last arguments with its usage and its start, the
// usage with the round's end), and each of them is a row saved.
const severalEvents int16 = 0

// eventsInRow is, in SQL over the events table (alias e), how many events a
// row holds.
var eventsInRow = `case when e.type = ` + strconv.Itoa(int(severalEvents)) + ` then json_array_length(e.data) else 1 end`

// eventRun returns how many of evs (at least one), from the first, have
// seqs that follow each other: the events one row can hold.
func eventRun(evs []toolmark.Event) int {
	n := 1
	for n < len(evs) && evs[n].Seq == evs[n-1].Seq+1 {
		n++
	}
	return n
}

// appendSeveral appends the data of a row holding evs (two or more, their
// types numbered and their data valid JSON: checkWrite saw to both), having
// made room for it at once.
func appendSeveral(dst []byte, evs []toolmark.Event) []byte {
	size := 2
	for _, e := range evs {
		size += len(e.Data) + 16 // "[type,µs,…]," around the data
	}
	dst = slices.Grow(dst, size)
	t0 := evs[0].Time
	dst = append(dst, '[')
	for i, e := range evs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		dst = strconv.AppendInt(dst, int64(eventTypeCodes[e.Type]), 10)
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, e.Time.Sub(t0).Microseconds(), 10)
		dst = append(dst, ',')
		dst = append(dst, e.Data...)
		dst = append(dst, ']')
	}
	return append(dst, ']')
}

// eventRow is a stored row of the events table: its type's number, its
// data, its seq (its last event's) and its time (its first event's).
type eventRow struct {
	code int16
	data []byte
	seq  int64
	time time.Time
}

// appendEvents appends to dst the row's events after seq after, until dst
// holds limit events. The events have no turn or message id yet.
func (r eventRow) appendEvents(dst []toolmark.Event, after int64, limit int) ([]toolmark.Event, error) {
	if r.code != severalEvents {
		typ, err := eventTypeOf(r.code)
		if err != nil {
			return dst, err
		}
		if r.seq > after && len(dst) < limit {
			dst = append(dst, toolmark.Event{Seq: r.seq, Type: typ, Time: r.time, Data: json.RawMessage(r.data)})
		}
		return dst, nil
	}
	var items [][]json.RawMessage
	if err := json.Unmarshal(r.data, &items); err != nil || len(items) == 0 {
		return dst, fmt.Errorf("reading events: a row of several events at seq %d does not parse", r.seq)
	}
	first := r.seq - int64(len(items)) + 1
	for i, it := range items {
		s := first + int64(i)
		if len(it) != 3 {
			return dst, fmt.Errorf("reading events: event %d of a row of several has %d fields, want 3", s, len(it))
		}
		code, err1 := strconv.ParseInt(string(it[0]), 10, 16)
		us, err2 := strconv.ParseInt(string(it[1]), 10, 64)
		if err1 != nil || err2 != nil {
			return dst, fmt.Errorf("reading events: event %d of a row of several has a bad type or time", s)
		}
		typ, err := eventTypeOf(int16(code))
		if err != nil {
			return dst, err
		}
		if s > after && len(dst) < limit {
			dst = append(dst, toolmark.Event{Seq: s, Type: typ, Time: r.time.Add(time.Duration(us) * time.Microsecond), Data: it[2]})
		}
	}
	return dst, nil
}
