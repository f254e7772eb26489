package turnstate

import (
	"testing"

	"github.com/toolmark/toolmark"
)

// TestArgsChunks: arguments streamed in chunks accumulate in ArgsText; a
// Call read before later chunks keeps the arguments it had; a delta with
// the accumulated arguments replaces them, and chunks after it append to
// them.
func TestArgsChunks(t *testing.T) {
	s := New()
	markup := tag("c1", "write_file", "pending")
	started := toolmark.Draft{Type: toolmark.EventToolCallStarted, Data: toolmark.ToolCallData{ToolCallID: "c1", Name: "write_file", Status: "pending", Markup: markup}}
	delta := func(chunk, acc string) toolmark.Draft {
		return toolmark.Draft{Type: toolmark.EventToolCallDelta, Data: toolmark.ToolCallData{ToolCallID: "c1", Name: "write_file", Status: "pending", Markup: markup, Chunk: chunk, Accumulated: acc}}
	}
	args := func() string {
		t.Helper()
		c, ok := s.Call("c1")
		if !ok {
			t.Fatal("no call c1")
		}
		return c.ArgsText
	}
	mustApply(t, s, []toolmark.Draft{started, delta(`{"te`, ""), delta(`xt":"ab`, "")})
	before := args()
	mustApply(t, s, []toolmark.Draft{delta(`cd`, ""), delta(`ef`, "")})
	if before != `{"text":"ab` || args() != `{"text":"abcdef` {
		t.Fatalf("ArgsText %q then %q; want %q then %q", before, args(), `{"text":"ab`, `{"text":"abcdef`)
	}
	mustApply(t, s, []toolmark.Draft{delta(`g`, `{"text":"abcdefg`), delta(`h"}`, "")})
	if got := args(); got != `{"text":"abcdefgh"}` {
		t.Errorf("after an accumulated delta and a chunk, ArgsText %q; want %q", got, `{"text":"abcdefgh"}`)
	}
	// An accumulated delta that is not the chunks so far wins, and chunks
	// go on from it.
	mustApply(t, s, []toolmark.Draft{delta(`x`, `{"a":1`), delta(`}`, "")})
	if got := args(); got != `{"a":1}` {
		t.Errorf("ArgsText %q; want %q", got, `{"a":1}`)
	}
}
