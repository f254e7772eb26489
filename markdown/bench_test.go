package markdown

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark/internal/harness/cputime"
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
		c0, t0 := cputime.Process(), time.Now()
		if _, err := r.Render(with); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		c1, t1 := cputime.Process(), time.Now()
		if _, err := r.Render(without); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		c2, t2 := cputime.Process(), time.Now()
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
