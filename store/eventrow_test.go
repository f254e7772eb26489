package store

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
)

// FuzzRowEvents: a row of several events reads back as the events written
// into it, and a row of any other bytes reads as an error or as events of
// known types with seqs after the cursor, never as a panic.
func FuzzRowEvents(f *testing.F) {
	f.Add([]byte(`[[4,0,{"text":"a"}],[14,12,{"round":1}]]`), "hi", int64(1))
	f.Add([]byte(`[[4,0,{}]]`), `"]],[[`, int64(0))
	f.Add([]byte(`[[0,0,{}]]`), "", int64(-3))
	f.Add([]byte(`[[4,"x",{}],[4]]`), "é\x00", int64(7))
	f.Fuzz(func(t *testing.T, data []byte, text string, after int64) {
		t0 := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
		if evs, err := (eventRow{severalEvents, data, 100, t0}).appendEvents(nil, after, 1000); err == nil {
			for _, e := range evs {
				if e.Seq <= after || e.Seq > 100 || e.Type == "" || !json.Valid(e.Data) {
					t.Fatalf("row %q after %d gave %+v", data, after, e)
				}
			}
		}

		raw, err := json.Marshal(toolmark.TextDeltaData{Text: text})
		if err != nil {
			t.Skip()
		}
		written := []toolmark.Event{
			{Seq: 10, Type: toolmark.EventTextDelta, Data: raw, Time: t0},
			{Seq: 11, Type: toolmark.EventUsage, Data: json.RawMessage(`{"round":1}`), Time: t0.Add(time.Duration(after%1e9) * time.Microsecond)},
			{Seq: 12, Type: toolmark.EventTextDelta, Data: raw, Time: t0.Add(-time.Second)},
		}
		cursor := 9 + (after%4+4)%4 // 9 to 12
		got, err := (eventRow{severalEvents, appendSeveral(nil, written), 12, t0}).appendEvents(nil, cursor, 1000)
		if err != nil {
			t.Fatalf("reading back %q: %v", appendSeveral(nil, written), err)
		}
		if want := written[cursor-9:]; len(got) != len(want) {
			t.Fatalf("after %d: got %d events, want %d", cursor, len(got), len(want))
		} else {
			for i := range got {
				g, w := got[i], want[i]
				if g.Seq != w.Seq || g.Type != w.Type || string(g.Data) != string(w.Data) || !g.Time.Equal(w.Time) {
					t.Fatalf("after %d: event %d = %+v, want %+v", cursor, i, g, w)
				}
			}
		}
	})
}

// FuzzStoredForm: every event reads back from its stored form as itself,
// byte for byte, and a text_delta as encoding/json writes it is stored as
// its text alone.
func FuzzStoredForm(f *testing.F) {
	f.Add([]byte(`{"text":"a"}`), "a")
	f.Add([]byte(`{"text":"a\"}"}`), `"\`)
	f.Add([]byte(`{"text":"a","b":"c"}`), "</ToolCall>")
	f.Add([]byte(`{"text":"\\"}`), "\u2028\x00")
	f.Add([]byte(`{"text":5}`), "")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		raw, err := json.Marshal(toolmark.TextDeltaData{Text: text})
		if err != nil {
			t.Skip()
		}
		if code, _ := storedForm(toolmark.Event{Type: toolmark.EventTextDelta, Data: raw}); code != textAlone {
			t.Fatalf("%s is stored as type %d, want its text alone", raw, code)
		}
		for _, d := range [][]byte{raw, data} {
			if !json.Valid(d) {
				continue
			}
			for _, typ := range []toolmark.EventType{toolmark.EventTextDelta, toolmark.EventUsage} {
				code, stored := storedForm(toolmark.Event{Type: typ, Data: d})
				gotType, got, err := loadedForm(code, stored)
				if err != nil || gotType != typ || string(got) != string(d) {
					t.Fatalf("%s %s stored as %d %s reads back as %s %s (%v)", typ, d, code, stored, gotType, got, err)
				}
			}
		}
	})
}
