package tui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
)

// longAnswer is about 40 KB of markdown of a shape: mixed (sections,
// lists, code), one paragraph, or one code block — the shapes of the
// demo's padding (TOOLMARK_TUI_PERF in e2e measures them end to end).
func longAnswer(shape string) string {
	var part, head string
	switch shape {
	case "paragraph":
		head, part = "The answer.\n\n", "This sentence pads the demo answer to the length the load test asked for. "
	case "code":
		head, part = "The answer.\n\n```go\n", "\tfmt.Println(\"this line pads the demo answer\", i) // to the length asked for\n"
	default:
		part = "## A section\n\n" + strings.Repeat("This sentence is part of a long answer, with **bold** and `code`. ", 6) + "\n\n" +
			"- a first point\n- a second point with a [link](https://example.com)\n- a third point\n\n" +
			"```go\nfmt.Println(\"hello\", i)\nfmt.Println(\"hello\", i)\n```\n\n"
	}
	return head + strings.Repeat(part, 40000/len(part)+1)
}

// BenchmarkLongAnswer streams a 40 KB answer in chunks of 12 bytes into
// the chat, drawing it once per frame's worth of chunks (about 3 chunks at
// 10 ms a chunk and 30 frames a second), as the client does.
func BenchmarkLongAnswer(b *testing.B) {
	for _, shape := range []string{"mixed", "paragraph", "code"} {
		b.Run(shape, func(b *testing.B) { benchmarkLongAnswer(b, longAnswer(shape)) })
	}
}

func benchmarkLongAnswer(b *testing.B, answer string) {
	var evs []client.Event
	seq := int64(0)
	add := func(t toolmark.EventType, data any) {
		seq++
		raw, _ := json.Marshal(data)
		ev, err := client.DecodeEvent(toolmark.Event{Seq: seq, Type: t, Time: time.Now(), Data: raw})
		if err != nil {
			b.Fatal(err)
		}
		evs = append(evs, ev)
	}
	add(toolmark.EventTurnStarted, toolmark.TurnStartedData{})
	for i := 0; i < len(answer); i += 12 {
		add(toolmark.EventTextDelta, toolmark.TextDeltaData{Text: answer[i:min(i+12, len(answer))]})
	}
	add(toolmark.EventTurnCompleted, toolmark.TurnEndData{Status: toolmark.TurnCompleted})
	b.ResetTimer()
	for range b.N {
		c := newChat(120, "dark")
		c.resize(120, 48)
		c.live = &entry{user: "q", acc: client.NewAccumulator(nil), running: true}
		for i, ev := range evs {
			if err := c.live.acc.Add(ev); err != nil {
				b.Fatal(err)
			}
			if i%3 == 0 {
				c.draw(false)
			}
		}
		c.draw(false)
	}
}
