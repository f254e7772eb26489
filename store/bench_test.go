package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
)

// BenchmarkCommit commits, in each call, a few text_delta events for each
// of 1, 16 and 256 turns leased by one owner (one group commit of the
// runner) and reports events committed per second.
func BenchmarkCommit(b *testing.B) {
	const perTurn = 4
	for _, turns := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			ctx := context.Background()
			f := newFixture(b)
			tus := []toolmark.Turn{f.turn}
			for len(tus) < turns {
				tus = append(tus, mustTurn(b, f.db, f.user.ID, mustConversation(b, f.db, f.user.ID).ID, "q"))
			}
			ds := make([]toolmark.Draft, perTurn)
			for i := range ds {
				ds[i] = toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "a few words of streamed text, "}}
			}
			rows := numbered(b, 0, ds...)
			ws := make([]store.TurnWrite, turns)
			var seq int64
			for b.Loop() {
				for i, tu := range tus {
					evs := make([]toolmark.Event, perTurn)
					for k := range evs {
						evs[k] = rows[k]
						evs[k].Seq = seq + int64(k) + 1
					}
					ws[i] = store.TurnWrite{TurnID: tu.ID, MessageID: tu.AssistantMessageID, Events: evs}
				}
				if err := f.db.Commit(ctx, testOwner, ws); err != nil {
					b.Fatal(err)
				}
				seq += perTurn
			}
			b.ReportMetric(float64(b.N*turns*perTurn)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
		})
	}
}

// BenchmarkCommitContent saves a 1 MB message with one event per call, as
// the runner does at a milestone of a long answer.
func BenchmarkCommitContent(b *testing.B) {
	ctx := context.Background()
	f := newFixture(b)
	content := strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 1<<20/57)
	b.SetBytes(int64(len(content)))
	var seq int64
	for b.Loop() {
		seq++
		w := write(b, f.turn, seq-1, toolmark.Draft{Type: toolmark.EventRoundStarted, Data: toolmark.RoundStartedData{Round: int(seq)}})
		w.Content = &content
		if err := f.db.Commit(ctx, testOwner, []store.TurnWrite{w}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(content))/1e6, "MB/message")
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
			insert into events (turn, seq, type, data, time)
			select (select num from turns where id = $1), s, $3, json_build_object('text', 'word ' || s), now()
			from generate_series(1, $2::int) s`, tu.ID, size, store.EventTypeCode(toolmark.EventTextDelta))
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

// BenchmarkSearchDocuments searches a knowledge base of five documents
// that all match, of 2, 16 and 60 KB each, for the five hits and their
// snippets: the search a demo turn makes twice.
func BenchmarkSearchDocuments(b *testing.B) {
	for _, size := range []int{2 << 10, 16 << 10, 60 << 10} {
		b.Run(fmt.Sprintf("body=%dKB", size>>10), func(b *testing.B) {
			ctx := context.Background()
			f := newFixture(b)
			para := "Streams resume after a dropped connection from the last event id. "
			for i := range 5 {
				body := strings.Repeat(para, size/len(para)) + fmt.Sprintf("Document %d ends here.", i)
				if _, err := f.db.UpsertDocument(ctx, fmt.Sprintf("doc%d.md", i), "Resuming streams", body); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				hits, err := f.db.SearchDocuments(ctx, "resume dropped connection", 5)
				if err != nil || len(hits) != 5 {
					b.Fatalf("got %d hits, %v; want 5", len(hits), err)
				}
			}
		})
	}
}
