package tui

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/markdown"
)

// TestLiveBlockRendersAsWhole streams long trailing blocks — a paragraph on
// one line, plain and with markup, and a long open code block — a few
// bytes at a time, and checks that every draw shows what rendering the
// block whole shows, line for line, while the frozen lines grow (only the
// rest is rendered again).
func TestLiveBlockRendersAsWhole(t *testing.T) {
	sentence := "This sentence pads the demo answer to the length the load test asked for. "
	tests := []struct {
		name, text string
		frozen     bool // lines must freeze
	}{
		{"paragraph", strings.Repeat(sentence, 60), true},
		{"paragraph with markup", strings.Repeat("A **bold** claim, `code` and a [link](https://example.com) in one sentence. ", 40), false},
		{"open code block", "```go\n" + strings.Repeat("\tfmt.Println(\"this line pads the demo answer\", i) // to the length asked for\n", 80), true},
		{"list", "- " + strings.Repeat(sentence, 20), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRenderer(80, "dark")
			whole := newRenderer(80, "dark")
			for n := 7; n < len(tt.text)+7; n += 37 {
				block := "\n" + markdown.HoldBack(tt.text[:min(n, len(tt.text))])
				got := visible(strings.Join(r.liveBlock(block), "\n"))
				want := visible(whole.render(plainOpenFence(block)))
				if got != want {
					t.Fatalf("after %d bytes (%d lines frozen):\n got %q\nwant %q", n, len(r.frozen.lines), tail(got), tail(want))
				}
			}
			if tt.frozen && len(r.frozen.lines) == 0 {
				t.Fatal("no line was frozen: the block was rendered whole at every draw")
			}
		})
	}
}

// visible is what a terminal shows of rendered lines: no escapes, no
// padding at the lines' ends.
func visible(s string) string {
	lines := strings.Split(ansi.Strip(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

func tail(s string) string { return s[max(0, len(s)-300):] }

// TestStreamedAnswerRendersAsWhole streams answers of every shape —
// paragraph, code, mixed, and text with wide and combining characters —
// into the chat in chunks that cut words, lines and code lines, and checks
// that every draw shows what rendering the text so far whole shows, and
// that the end, drawn first as it streamed and then settled, shows exactly
// what the full rendering of the answer shows.
func TestStreamedAnswerRendersAsWhole(t *testing.T) {
	wide := "Ünïcödé naïve café, 中文字符 and e\u0301 combined, 😀 wide. "
	tests := map[string]string{
		"paragraph": longAnswer("paragraph")[:6000],
		"code":      longAnswer("code")[:6000],
		"mixed":     longAnswer("mixed")[:6000],
		"wide":      "Intro.\n\n" + strings.Repeat(wide, 30) + "\n\n```text\nplain line\n" + strings.Repeat("中文 code, e\u0301 ok\nascii line\n", 20),
	}
	for name, text := range tests {
		t.Run(name, func(t *testing.T) {
			c := newChat(80, "dark")
			c.resize(80, 24)
			c.live = &entry{acc: client.NewAccumulator(nil), running: true}
			whole := newRenderer(80, "dark")
			seq := int64(0)
			add := func(typ toolmark.EventType, data any) {
				seq++
				raw, _ := json.Marshal(data)
				ev, err := client.DecodeEvent(toolmark.Event{Seq: seq, Type: typ, Data: raw})
				if err != nil {
					t.Fatal(err)
				}
				if err := c.live.acc.Add(ev); err != nil {
					t.Fatal(err)
				}
			}
			add(toolmark.EventTurnStarted, toolmark.TurnStartedData{})
			for sent := 0; sent < len(text); {
				n := min(sent+37, len(text))
				for n < len(text) && !utf8.RuneStart(text[n]) {
					n++ // a delta is whole characters
				}
				add(toolmark.EventTextDelta, toolmark.TextDeltaData{Text: text[sent:n]})
				sent = n
				c.draw(false)
				got := c.lines
				if c.live.acc.Bubble() != "" {
					got = got[:len(got)-1] // the status line
				}
				if g, w := ansi.Strip(strings.Join(got, "\n")), ansi.Strip(renderWhole(whole, text[:sent])); g != w {
					t.Fatalf("after %d bytes:\n got %q\nwant %q", sent, tail(g), tail(w))
				}
			}
			add(toolmark.EventTurnCompleted, toolmark.TurnEndData{Status: toolmark.TurnCompleted})
			c.live.running = false
			if c.ended() == nil {
				t.Fatal("the end asked for no full rendering")
			}
			if g, w := ansi.Strip(strings.Join(c.lines, "\n")), ansi.Strip(renderWhole(whole, text)); g != w {
				t.Fatalf("the end, as it streamed:\n got %q\nwant %q", tail(g), tail(w))
			}
			c.settle()
			// chroma picks between two equally close colours of the palette
			// at random: the rendering is compared whole with the chat's own
			// renderer's, and its text with a fresh one's.
			if g, w := strings.Join(c.lines, "\n"), strings.Join(c.r.markdown(nil, text, false), "\n"); g != w {
				t.Fatalf("the end, settled:\n got %q\nwant %q", tail(g), tail(w))
			}
			if g, w := ansi.Strip(strings.Join(c.lines, "\n")), ansi.Strip(strings.Join(whole.markdown(nil, text, false), "\n")); g != w {
				t.Fatalf("the end, settled:\n got %q\nwant %q", tail(g), tail(w))
			}
		})
	}
}

// renderWhole renders streamed text whole, block by block, as the chat
// shows it while it streams: the trailing block held back where its last
// line leaves markup open, and an open code fence shown plain.
func renderWhole(r *renderer, text string) string {
	blocks := splitBlocks(strings.ReplaceAll(text, "\t", "    "))
	var out []string
	for i, b := range blocks {
		if i == len(blocks)-1 {
			b = plainOpenFence(strings.TrimLeft(markdown.HoldBack(b), "\n"))
		}
		if md := strings.Join(trimMargins(splitRendered(r.render(b))), "\n"); md != "" {
			out = append(out, md)
		}
	}
	return strings.Join(out, "\n\n")
}
