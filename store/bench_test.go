package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// BenchmarkAppendEvents appends batches of text_delta events to one turn
// and reports events appended per second.
func BenchmarkAppendEvents(b *testing.B) {
	for _, size := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			ctx := context.Background()
			f := newFixture(b)
			in := make([]store.EventInput, size)
			for i := range in {
				in[i] = store.EventInput{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "a few words of streamed text, "}}
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := f.db.AppendEvents(ctx, f.turn.ID, f.turn.AssistantMessageID, in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkEventsAfter reads the 10 events after seq N in turns of 1 000
// and 100 000 events, N near the start, in the middle and near the end: the
// time must not grow with the turn's size or with N.
func BenchmarkEventsAfter(b *testing.B) {
	ctx := context.Background()
	f := newFixture(b)
	u := f.user
	for _, size := range []int{1000, 100000} {
		tu := mustTurn(b, f.db, u.ID, mustConversation(b, f.db, u.ID).ID, "long")
		_, err := f.db.Pool().Exec(ctx, `
			insert into events (turn_id, seq, type, data, time)
			select $1, s, 'text_delta', json_build_object('text', 'word ' || s), now()
			from generate_series(1, $2::bigint) s`, tu.ID, size)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.db.Pool().Exec(ctx, `update turns set last_seq = $2 where id = $1`, tu.ID, size); err != nil {
			b.Fatal(err)
		}
		if _, err := f.db.Pool().Exec(ctx, `vacuum (analyze) events`); err != nil {
			b.Fatal(err)
		}
		for _, at := range []struct {
			name string
			n    int64
		}{{"start", 10}, {"middle", int64(size / 2)}, {"end", int64(size - 10)}} {
			b.Run(fmt.Sprintf("events=%d/N=%s", size, at.name), func(b *testing.B) {
				for b.Loop() {
					es, err := f.db.EventsAfter(ctx, tu.ID, at.n, 10)
					if err != nil || len(es) != 10 || es[0].Seq != at.n+1 {
						b.Fatalf("EventsAfter(%d) = %d events, %v", at.n, len(es), err)
					}
				}
			})
		}
	}
}

// BenchmarkRewriteToolCall rewrites a tag in the middle of a 1 MB stored
// message: lock, read, rewrite, write, commit.
func BenchmarkRewriteToolCall(b *testing.B) {
	ctx := context.Background()
	f := newFixture(b)
	d, _ := toolcallmarkup.NewDocument("")
	half := strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 512<<10/57)
	d.AppendText(half)
	if _, err := d.Start(toolcallmarkup.ToolCall{ID: "c1", Type: "search_documents", Status: toolcallmarkup.StatusRunning}); err != nil {
		b.Fatal(err)
	}
	d.AppendText(half)
	d.Flush()
	if err := f.db.SaveContent(ctx, f.turn.AssistantMessageID, d.String(), 1); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(d.Len()))
	i := 0
	for b.Loop() {
		i++
		u := toolcallmarkup.Update{Status: toolcallmarkup.StatusRunning, Extra: []toolcallmarkup.Attr{{Key: "count", Value: fmt.Sprint(i)}}}
		if err := f.db.RewriteToolCall(ctx, f.turn.AssistantMessageID, "c1", u); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(d.Len())/1e6, "MB/message")
}

// BenchmarkReplay rebuilds a message from 10 000 logged events in memory.
func BenchmarkReplay(b *testing.B) {
	var events []toolmark.Event
	d, _ := toolcallmarkup.NewDocument("")
	for i := range 10000 {
		var e toolmark.Event
		switch {
		case i%100 == 0:
			open, _ := d.Start(toolcallmarkup.ToolCall{ID: fmt.Sprintf("c%d", i), Type: "search_documents"})
			e = toolmark.Event{Type: toolmark.EventToolCallStarted, Data: mustJSON(b, toolmark.ToolCallData{ToolCallID: fmt.Sprintf("c%d", i), Markup: open})}
		case i%100 == 1:
			open, _ := d.Update(fmt.Sprintf("c%d", i-1), toolcallmarkup.Update{Status: toolcallmarkup.StatusSuccess})
			e = toolmark.Event{Type: toolmark.EventToolCallSuccess, Data: mustJSON(b, toolmark.ToolCallData{ToolCallID: fmt.Sprintf("c%d", i-1), Markup: open})}
		default:
			e = toolmark.Event{Type: toolmark.EventTextDelta, Data: mustJSON(b, toolmark.TextDeltaData{Text: d.AppendText("some words ")})}
		}
		e.Seq = int64(i + 1)
		events = append(events, e)
	}
	want := d.String()
	for b.Loop() {
		got, err := store.Replay("", events)
		if err != nil || got != want {
			b.Fatalf("Replay: %v (equal: %v)", err, got == want)
		}
	}
}
