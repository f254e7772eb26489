package turnstate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// BenchmarkArgsDeltas applies the tool_call_delta events of one call whose
// arguments stream in chunks of 8 bytes, as a model writes a long argument
// (a file's text): the cost of a chunk (ns/chunk) must not grow with the
// arguments.
func BenchmarkArgsDeltas(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("args=%dKB", size>>10), func(b *testing.B) {
			args := `{"text":"` + strings.Repeat("x", size) + `"}`
			markup := tag("c1", "write_file", "pending")
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				s := New()
				mustApply(b, s, []toolmark.Draft{{Type: toolmark.EventToolCallStarted, Data: toolmark.ToolCallData{ToolCallID: "c1", Name: "write_file", Status: "pending", Markup: markup}}})
				for rest := args; rest != ""; {
					n := min(8, len(rest))
					d := toolmark.Draft{Type: toolmark.EventToolCallDelta, Data: toolmark.ToolCallData{ToolCallID: "c1", Name: "write_file",
						Status: string(toolcallmarkup.StatusPending), Markup: markup, Chunk: rest[:n]}}
					if err := s.Apply(d, t0); err != nil {
						b.Fatal(err)
					}
					rest = rest[n:]
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64((len(args)+7)/8), "ns/chunk")
		})
	}
}
