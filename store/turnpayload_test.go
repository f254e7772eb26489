package store

import (
	"strings"
	"testing"
)

// FuzzTurnPayload: a ChannelTurns payload reads back as the ids and owner
// written into it (ids hold no space), and any other text reads as not ok
// or as two non-empty ids without spaces, never as a panic.
func FuzzTurnPayload(f *testing.F) {
	f.Add("t-1", "c-1", "replica a", "t-1 c-1 r")
	f.Add("", "c", "", " c ")
	f.Add("t", "c", "", "t")
	f.Fuzz(func(t *testing.T, turn, conv, owner, raw string) {
		if turn != "" && conv != "" && !strings.Contains(turn, " ") && !strings.Contains(conv, " ") {
			gt, gc, go_, ok := ParseTurnPayload(TurnPayload(turn, conv, owner))
			if !ok || gt != turn || gc != conv || go_ != owner {
				t.Fatalf("round trip of %q %q %q: %q %q %q %v", turn, conv, owner, gt, gc, go_, ok)
			}
		}
		if gt, gc, _, ok := ParseTurnPayload(raw); ok && (gt == "" || gc == "" || strings.Contains(gt+gc, " ")) {
			t.Fatalf("%q read as %q %q", raw, gt, gc)
		}
	})
}
