package store

import (
	"bytes"
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

// textAlone is the type of a row (or of an item of a row of several)
// holding a text_delta as its text alone: the data is the JSON string that
// the event's {"text": …} holds, and reads back as that object, byte for
// byte. Text is most of a turn's events (about two in three of a demo
// turn's), and the wrapper was a quarter of a text row's data.
const textAlone int16 = -4

// textPrefix and textSuffix are what a text_delta's data holds around its
// text, as encoding/json writes toolmark.TextDeltaData.
const textPrefix, textSuffix = `{"text":`, `}`

// storedForm returns the type number and data an event is stored as (its
// type numbered, which checkWrite saw to): a text_delta whose data is
// exactly {"text":"…"} as textAlone and its string, any other event as
// itself.
func storedForm(e toolmark.Event) (int16, []byte) {
	d := e.Data
	if e.Type == toolmark.EventTextDelta && bytes.HasPrefix(d, []byte(textPrefix)) && bytes.HasSuffix(d, []byte(textSuffix)) {
		if s := d[len(textPrefix) : len(d)-len(textSuffix)]; isJSONString(s) {
			return textAlone, s
		}
	}
	code, _ := e.Type.Code()
	return code, d
}

// isJSONString reports whether s, a part of valid JSON, is one JSON string
// and nothing else: it opens and closes with a quote and has no unescaped
// quote between.
func isJSONString(s []byte) bool {
	if len(s) < 2 || s[0] != '"' {
		return false
	}
	i := 1
	for i < len(s)-1 {
		switch s[i] {
		case '\\':
			i += 2
		case '"':
			return false
		default:
			i++
		}
	}
	return i == len(s)-1 && s[i] == '"'
}

// loadedForm returns the event type and data of what is stored as code and
// data: the inverse of storedForm. A row of several is no event's form.
func loadedForm(code int16, data []byte) (toolmark.EventType, json.RawMessage, error) {
	if code == textAlone {
		if len(data) < 2 || data[0] != '"' {
			return "", nil, fmt.Errorf("reading events: a text row holds no string")
		}
		d := make([]byte, 0, len(textPrefix)+len(data)+len(textSuffix))
		return toolmark.EventTextDelta, append(append(append(d, textPrefix...), data...), textSuffix...), nil
	}
	typ, err := eventTypeOf(code)
	return typ, data, err
}

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
// types numbered and their data valid JSON: checkWrite saw to both), each
// in its stored form, having made room for it at once.
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
		code, data := storedForm(e)
		dst = append(dst, '[')
		dst = strconv.AppendInt(dst, int64(code), 10)
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, e.Time.Sub(t0).Microseconds(), 10)
		dst = append(dst, ',')
		dst = append(dst, data...)
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
		typ, data, err := loadedForm(r.code, r.data)
		if err != nil {
			return dst, err
		}
		if r.seq > after && len(dst) < limit {
			dst = append(dst, toolmark.Event{Seq: r.seq, Type: typ, Time: r.time, Data: data})
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
		typ, data, err := loadedForm(int16(code), it[2])
		if err != nil {
			return dst, err
		}
		if s > after && len(dst) < limit {
			dst = append(dst, toolmark.Event{Seq: s, Type: typ, Time: r.time.Add(time.Duration(us) * time.Microsecond), Data: data})
		}
	}
	return dst, nil
}
