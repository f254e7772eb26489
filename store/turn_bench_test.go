package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/store"
)

// BenchmarkCreateTurns creates groups of 1 and 64 turns, as the runner
// does, plain or each with an attachment and replacing the previous
// question, and reports turns per second and statements per turn.
func BenchmarkCreateTurns(b *testing.B) {
	for _, group := range []int{1, 64} {
		for _, kind := range []string{"plain", "attachment+replaces"} {
			b.Run(fmt.Sprintf("group=%d/%s", group, kind), func(b *testing.B) {
				ctx := context.Background()
				sc := &pgtest.Statements{}
				f := newFixture(b, store.WithTracer(sc))
				up, err := f.db.CreateUpload(ctx, f.user.ID, "a.txt", "text/plain", []byte("a"), 0)
				if err != nil {
					b.Fatal(err)
				}
				convs := make([]string, group)
				prev := make([]string, group)
				for i := range convs {
					convs[i] = mustConversation(b, f.db, f.user.ID).ID
				}
				nts := make([]store.NewTurn, group)
				var turns, stmts int64
				for b.Loop() {
					for i := range nts {
						nts[i] = store.NewTurn{OwnerID: f.user.ID, ConversationID: convs[i], Input: toolmark.TurnInput{Content: "q"},
							LeaseOwner: testOwner, LeaseTTL: time.Minute,
							Queued: &toolmark.Event{Type: toolmark.EventTurnQueued, Data: []byte(`{}`), Time: time.Now()}}
						if kind != "plain" {
							nts[i].Input.Attachments, nts[i].Replaces = []string{up.ID}, prev[i]
						}
					}
					before := sc.N.Load()
					out := f.db.CreateTurns(ctx, nts)
					stmts += sc.N.Load() - before
					b.StopTimer()
					ids := make([]string, len(out))
					for i, r := range out {
						if r.Err != nil || !r.Created {
							b.Fatalf("turn %d: %+v", i, r)
						}
						prev[i], ids[i] = r.Turn.UserMessageID, r.Turn.ID
					}
					// End them, so the next turn of each conversation may start.
					if _, err := f.db.Pool().Exec(ctx, `update turns set status = 'completed', finished_at = now(), lease_owner = null, lease_expires_at = null where id = any($1)`, ids); err != nil {
						b.Fatal(err)
					}
					turns += int64(len(out))
					b.StartTimer()
				}
				b.ReportMetric(float64(turns)/b.Elapsed().Seconds(), "turns/s")
				b.ReportMetric(float64(stmts)/float64(turns), "statements/turn")
			})
		}
	}
}
