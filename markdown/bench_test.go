package markdown

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// benchMessages returns a message of about 1 MiB holding 1 000 genuine tags
// (block tags, sub-agents with children, inline tags) among ordinary
// markdown, and the same message with the tags removed.
func benchMessages() (withTags, withoutTags string) {
	const tags = 1000
	text := []string{
		"Here is what I found about **leases** and `SELECT ... FOR UPDATE`: the runner renews its lease every few seconds, " +
			"and a replica that finds an expired one finalises the turn. See [the design](https://example.com/design#leases) " +
			"and www.example.org/docs for details; *never* hold a lease across a network call.\n\n",
		"1. Take the lease.\n2. Run the tool loop.\n   - stream text deltas\n   - persist at every status change\n3. Release.\n\n",
		"```go\nfunc (r *Runner) renew(ctx context.Context) error {\n\treturn r.store.RenewLease(ctx, r.turnID, r.owner)\n}\n```\n\n",
		"| Status | Final |\n|--------|-------|\n| running | no |\n| success | yes |\n\n> Note: a cancelled turn stores `cancelled` tags, never `running` ones.\n\n",
	}
	var with, without strings.Builder
	per := (1<<20)/tags - 200
	for i := 0; i < tags; i++ {
		var chunk strings.Builder
		for j := i; chunk.Len() < per; j++ {
			chunk.WriteString(text[j%len(text)])
		}
		with.WriteString(chunk.String())
		without.WriteString(chunk.String())
		id := fmt.Sprintf("call_%d", i)
		tc := toolcallmarkup.ToolCall{ID: id, Type: "search_documents", Status: toolcallmarkup.StatusSuccess,
			Attrs: []toolcallmarkup.Attr{{Key: "query", Value: fmt.Sprintf("lease renewal %d", i)}, {Key: "count", Value: "5"}}}
		switch i % 10 {
		case 0: // a sub-agent holding the next call
			sub := toolcallmarkup.ToolCall{ID: id + "_sub", Type: "subagent", Status: toolcallmarkup.StatusRunning,
				Attrs: []toolcallmarkup.Attr{{Key: "task", Value: "Compare retry strategies"}}}
			tc.ParentID = sub.ID
			with.WriteString(toolcallmarkup.OpenTag(sub) + toolcallmarkup.Markup(tc) + "</ToolCall>\n\n")
			i++
		case 5: // inline
			with.WriteString("Checking " + toolcallmarkup.Markup(tc) + " now.\n\n")
			without.WriteString("Checking  now.\n\n")
		default:
			if i%3 == 0 {
				tc.Status, tc.Error = toolcallmarkup.StatusError, "upstream timeout"
			}
			with.WriteString(toolcallmarkup.Markup(tc) + "\n\n")
		}
	}
	return with.String(), without.String()
}

// BenchmarkRender renders the 1 MiB message with and without its tags.
func BenchmarkRender(b *testing.B) {
	with, without := benchMessages()
	r := New()
	for _, bc := range []struct{ name, content string }{{"tags", with}, {"no-tags", without}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.content)))
			for b.Loop() {
				if _, err := r.Render(bc.content); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRenderOverhead renders both messages in each iteration and
// reports the extension's overhead — CPU time with tags / CPU time without
// (overhead-x), the same by wall time (overhead-wall-x) — and the throughput
// of each message by wall time (MB/s) and by CPU time (MB/cpu-s; the
// garbage collector's work included).
func BenchmarkRenderOverhead(b *testing.B) {
	with, without := benchMessages()
	if n := len(toolcallmarkup.Scan(with)); n != 1000 {
		b.Fatalf("benchmark message holds %d tags, want 1000", n)
	}
	r := New()
	var wallWith, wallWithout, cpuWith, cpuWithout time.Duration
	for b.Loop() {
		runtime.GC()
		c0, t0 := cpuTime(), time.Now()
		if _, err := r.Render(with); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		c1, t1 := cpuTime(), time.Now()
		if _, err := r.Render(without); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		c2, t2 := cpuTime(), time.Now()
		wallWith += t1.Sub(t0)
		wallWithout += t2.Sub(t1)
		cpuWith += c1 - c0
		cpuWithout += c2 - c1
	}
	n := float64(b.N)
	if cpuWithout > 0 {
		b.ReportMetric(cpuWith.Seconds()/cpuWithout.Seconds(), "overhead-x")
		b.ReportMetric(float64(len(with))*n/cpuWith.Seconds()/1e6, "MB/cpu-s-tags")
		b.ReportMetric(float64(len(without))*n/cpuWithout.Seconds()/1e6, "MB/cpu-s-no-tags")
	}
	b.ReportMetric(wallWith.Seconds()/wallWithout.Seconds(), "overhead-wall-x")
	b.ReportMetric(float64(len(with))*n/wallWith.Seconds()/1e6, "MB/s-tags")
	b.ReportMetric(float64(len(without))*n/wallWithout.Seconds()/1e6, "MB/s-no-tags")
}

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
	r := New()
	for _, mode := range []string{"live", "full-render"} {
		b.Run(mode, func(b *testing.B) {
			var cpu time.Duration
			frames := 0
			for range b.N {
				start := cpuTime()
				lives := make([]*Live, turns)
				versions := make([]int64, turns)
				pos := make([]int, turns)
				for i := range lives {
					lives[i] = r.Live()
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
							if err := l.Apply(e); err != nil {
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
				cpu += cpuTime() - start
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N*turns), "cpu-ms/turn")
			b.ReportMetric(float64(frames)/float64(b.N*turns), "frames/turn")
		})
	}
}
