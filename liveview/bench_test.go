package liveview

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/cputime"
	"github.com/toolmark/toolmark/markdown"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// liveTurn writes the event log of a turn shaped like a demo answer: a
// plan, three searches (one inside a sub-agent), then about 3 KB of
// markdown streamed three words at a time.
func liveTurn(tb testing.TB, n int) []toolmark.Event {
	l := newEventLog(tb)
	l.text("\n\n")
	for i := range 3 {
		tc := toolcallmarkup.ToolCall{ID: fmt.Sprintf("t%d_c%d", n, i), Type: "search_documents"}
		if i == 2 {
			l.start(toolcallmarkup.ToolCall{ID: fmt.Sprintf("t%d_a", n), Type: "subagent", Status: toolcallmarkup.StatusRunning,
				Attrs: []toolcallmarkup.Attr{{Key: "task", Value: "Look up how crash recovery works"}}})
			tc.ParentID = fmt.Sprintf("t%d_a", n)
		}
		l.start(tc)
		for _, chunk := range []string{`{"que`, `ry":"resu`, `me stream`, `"}`} {
			_ = chunk
			l.update(tc.ID, toolcallmarkup.Update{Status: toolcallmarkup.StatusPending})
		}
		l.update(tc.ID, toolcallmarkup.Update{Status: toolcallmarkup.StatusRunning, Extra: []toolcallmarkup.Attr{{Key: "query", Value: "resume stream"}}})
		l.update(tc.ID, toolcallmarkup.Update{Status: toolcallmarkup.StatusSuccess, Extra: []toolcallmarkup.Attr{{Key: "count", Value: "3"}}})
		l.text("\n\n")
	}
	l.update(fmt.Sprintf("t%d_a", n), toolcallmarkup.Update{Status: toolcallmarkup.StatusSuccess})
	answer := "*(offline demo model: no language model is configured, so this answer is assembled from the tool results)*\n\n"
	for p := range 6 {
		answer += fmt.Sprintf("**Part %d of the question?** To resume, a client reconnects to `GET /api/turns/{id}/events` and says what it "+
			"has already seen: the browser's EventSource sends the `Last-Event-ID` header automatically [%d]. A comment line every "+
			"15 seconds keeps proxies from closing an idle stream [%d].\n\n", p+1, p+1, p+2)
	}
	answer += "```sh\ncurl -N -H 'Last-Event-ID: 42' http://127.0.0.1:8080/api/turns/TURN_ID/events\n```\n\nSources:\n\n"
	for s := range 7 {
		answer += fmt.Sprintf("- [%d] Resuming a stream after a disconnect — toolmark-docs/resume-%d.md\n", s+1, s)
	}
	for _, w := range strings.SplitAfter(answer, " ") {
		l.text(w)
	}
	l.end()
	return l.evs
}

// BenchmarkLive streams 100 turns at once, as the server does: each turn's
// events arrive in batches of one to three, and after each batch the turn's
// Live renders what changed and the frame is encoded once (a turn's
// followers share it). It reports the server's CPU time per streamed turn
// (cpu-ms/turn) and, for comparison, the same with the whole message
// rendered again after each batch (full-render).
func BenchmarkLive(b *testing.B) {
	const turns = 100
	logs := make([][]toolmark.Event, turns)
	for i := range logs {
		logs[i] = liveTurn(b, i)
	}
	r := markdown.New()
	for _, mode := range []string{"live", "full-render"} {
		b.Run(mode, func(b *testing.B) {
			var cpu time.Duration
			frames := 0
			for range b.N {
				start := cputime.Process()
				lives := make([]*View, turns)
				versions := make([]int64, turns)
				pos := make([]int, turns)
				for i := range lives {
					lives[i] = New(r)
					versions[i] = -1
				}
				for active := turns; active > 0; {
					active = 0
					for i, l := range lives {
						evs := logs[i]
						if pos[i] >= len(evs) {
							continue
						}
						active++
						end := min(len(evs), pos[i]+1+(pos[i]+i)%3)
						for _, e := range evs[pos[i]:end] {
							if err := l.ApplyEvent(e); err != nil {
								b.Fatal(err)
							}
						}
						pos[i] = end
						if mode == "live" {
							u, err := l.Update(versions[i])
							if err != nil {
								b.Fatal(err)
							}
							versions[i] = u.Version
							if _, err := json.Marshal(u); err != nil {
								b.Fatal(err)
							}
						} else {
							html, err := r.Render(l.State().Content())
							if err != nil {
								b.Fatal(err)
							}
							if _, err := json.Marshal(html); err != nil {
								b.Fatal(err)
							}
						}
						frames++
					}
				}
				cpu += cputime.Process() - start
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N*turns), "cpu-ms/turn")
			b.ReportMetric(float64(frames)/float64(b.N*turns), "frames/turn")
		})
	}
}
