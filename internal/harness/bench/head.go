package bench

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unique"

	"github.com/toolmark/toolmark"
)

// eventHead is the part of an event the bench decodes.
type eventHead struct {
	Seq  int64              `json:"seq"`
	Type toolmark.EventType `json:"type"`
	Time time.Time          `json:"time"`
}

// decodeHead decodes the head of an event's JSON. The bench shares the
// machine it measures, and decoding every event whole with encoding/json
// was about a quarter of its CPU. The server writes the head's fields
// first, as plain scalars, and the event's data last (sse.AppendEvent), so
// headPrefix reads them and stops at the data: what follows is not read,
// so the bench does not check that it is valid JSON (the server's tests
// do). A head it does not expect falls back to decoding the whole event.
func decodeHead(data string) (eventHead, error) {
	if h, _, ok := headPrefix(data); ok {
		return h, nil
	}
	var h eventHead
	err := json.Unmarshal([]byte(data), &h)
	return h, err
}

// headKeys are the keys headPrefix reads before "data", each at most once.
var headKeys = [...]string{"seq", "turnId", "messageId", "type", "time"}

// headPrefix reads an event's head: an object whose first keys are among
// headKeys, each once, spelt exactly, with no white space, their values
// strings without escapes or control characters, or integers, followed by
// the key "data". It returns the head and the length n of the prefix it
// read, up to and including `"data":`. When ok, data[:n] + `null}` is a
// JSON object that encoding/json decodes into the same head
// (FuzzHeadPrefix).
func headPrefix(data string) (h eventHead, n int, ok bool) {
	if !strings.HasPrefix(data, "{") {
		return h, 0, false
	}
	var seen [len(headKeys)]bool
	i := 1
	for {
		key, next, ok := plainString(data, i)
		if !ok || next >= len(data) || data[next] != ':' {
			return h, 0, false
		}
		i = next + 1
		if key == "data" {
			return h, i, true
		}
		k := slices.Index(headKeys[:], key)
		if k < 0 || seen[k] {
			return h, 0, false
		}
		seen[k] = true
		var val string
		quoted := i < len(data) && data[i] == '"' // a string, else an integer
		if quoted {
			val, i, ok = plainString(data, i)
		} else {
			val, i, ok = integer(data, i)
		}
		if !ok {
			return h, 0, false
		}
		switch key {
		case "seq":
			seq, err := strconv.ParseInt(val, 10, 64)
			if err != nil || quoted {
				return h, 0, false
			}
			h.Seq = seq
		case "type":
			if !quoted {
				return h, 0, false
			}
			// Interned: the bench keeps every event's type, and a
			// substring would keep the whole event with it.
			h.Type = toolmark.EventType(unique.Make(val).Value())
		case "time":
			if !quoted || h.Time.UnmarshalText([]byte(val)) != nil { // as encoding/json decodes a time
				return h, 0, false
			}
		}
		if i >= len(data) || data[i] != ',' {
			return h, 0, false
		}
		i++
	}
}

// plainString reads the JSON string that starts at data[i] when it holds
// no escape, control character or invalid UTF-8, and returns its text and
// the index after its closing quote.
func plainString(data string, i int) (s string, next int, ok bool) {
	if i >= len(data) || data[i] != '"' {
		return "", 0, false
	}
	end := strings.IndexByte(data[i+1:], '"')
	if end < 0 {
		return "", 0, false
	}
	s = data[i+1 : i+1+end]
	for k := 0; k < len(s); k++ {
		if s[k] < 0x20 || s[k] == '\\' {
			return "", 0, false
		}
	}
	if !utf8.ValidString(s) {
		return "", 0, false
	}
	return s, i + end + 2, true
}

// integer reads the JSON integer (no fraction or exponent) that starts at
// data[i] and returns it and the index after it.
func integer(data string, i int) (s string, next int, ok bool) {
	k := i
	if k < len(data) && data[k] == '-' {
		k++
	}
	digits := k
	for k < len(data) && '0' <= data[k] && data[k] <= '9' {
		k++
	}
	if k == digits || data[digits] == '0' && k-digits > 1 {
		return "", 0, false // no digits, or a leading zero
	}
	if k < len(data) && (data[k] == '.' || data[k] == 'e' || data[k] == 'E') {
		return "", 0, false
	}
	return data[i:k], k, true
}
