package simplifiedagent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent"
)

// BenchmarkTextDeltas measures the loop's cost per streamed text chunk:
// neutralising, appending to the document and emitting the event.
func BenchmarkTextDeltas(b *testing.B) {
	pieces := make([]string, 2000)
	for i := range pieces {
		pieces[i] = "some words <b>and</b> a ToolCall mention, "
	}
	model := chunkStreamer{pieces}
	events := 0
	emit := func(context.Context, toolmark.Draft) error { events++; return nil }
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := simplifiedagent.Run(context.Background(), simplifiedagent.Request{Model: model, Input: "x"}, emit); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(pieces)), "ns/chunk")
	b.ReportMetric(float64(events)/float64(b.N), "events/run")
}

// BenchmarkToolCallDeltas measures a tool call whose 40 KiB of arguments
// stream in 410 fragments (partial-JSON repair on each of the first 8 KiB).
func BenchmarkToolCallDeltas(b *testing.B) {
	model := bigArgs{}
	echo := funcTool{"echo", func(_ context.Context, in string) (string, error) { return strings.ToUpper(in), nil }}
	b.ReportAllocs()
	for range b.N {
		if _, err := simplifiedagent.Run(context.Background(), simplifiedagent.Request{Model: model, Input: "x",
			Tools: []simplifiedagent.Tool{echo}}, nil); err != nil {
			b.Fatal(err)
		}
	}
}
