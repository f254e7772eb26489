package store

import (
	"encoding/json"
	"fmt"
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
// A row costs a heap record and a key entry whatever it holds: under load a
// demo turn writes about one event in eight together with others (a tool
// call's last arguments with its start, the usage with the round's end),
// and each of them is a row saved.
const severalEvents int16 = 0

// eventsInRow is, in SQL over the events table (alias e), how many events a
// row holds.
const eventsInRow = `case when e.type = 0 then json_array_length(e.data) else 1 end`

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
// types numbered and their data valid JSON: checkWrite saw to both).
func appendSeveral(dst []byte, evs []toolmark.Event) []byte {
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

// rowEvents returns the events of a stored row of type code, whose seq is
// seq (its last event's) and time t (its first event's), leaving out
// those at or before after. The events have no turn or message id yet.
func rowEvents(code int16, data []byte, seq int64, t time.Time, after int64) ([]toolmark.Event, error) {
	if code != severalEvents {
		typ, err := eventTypeOf(code)
		if err != nil {
			return nil, err
		}
		return []toolmark.Event{{Seq: seq, Type: typ, Time: t, Data: json.RawMessage(data)}}, nil
	}
	var items [][]json.RawMessage
	if err := json.Unmarshal(data, &items); err != nil || len(items) == 0 {
		return nil, fmt.Errorf("reading events: a row of several events at seq %d does not parse", seq)
	}
	first := seq - int64(len(items)) + 1
	evs := make([]toolmark.Event, 0, len(items))
	for i, it := range items {
		s := first + int64(i)
		if len(it) != 3 {
			return nil, fmt.Errorf("reading events: event %d of a row of several has %d fields, want 3", s, len(it))
		}
		code, err1 := strconv.ParseInt(string(it[0]), 10, 16)
		us, err2 := strconv.ParseInt(string(it[1]), 10, 64)
		if err1 != nil || err2 != nil || code == int64(severalEvents) {
			return nil, fmt.Errorf("reading events: event %d of a row of several has a bad type or time", s)
		}
		typ, err := eventTypeOf(int16(code))
		if err != nil {
			return nil, err
		}
		if s > after {
			evs = append(evs, toolmark.Event{Seq: s, Type: typ, Time: t.Add(time.Duration(us) * time.Microsecond), Data: it[2]})
		}
	}
	return evs, nil
}
