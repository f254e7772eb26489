package runner

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolmark/toolmark"
)

// TestTextJoinsPendingText checks that a text_delta emitted while the
// turn's last event still waits for a commit joins it when that is text
// too, and starts an event of its own after any other event or past the
// bound; seqs stay gapless and the answer is the same.
func TestTextJoinsPendingText(t *testing.T) {
	r := &Runner{cfg: Config{MaxPending: 100}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	j := newJob(r, toolmark.Turn{ID: "t1"}, "u1", "q", 0)
	j.life.phase = phaseRunning
	emit := func(d toolmark.Draft) {
		t.Helper()
		j.mu.Lock()
		defer j.mu.Unlock()
		if err := j.emitLocked(d); err != nil {
			t.Fatal(err)
		}
	}
	text := func(s string) toolmark.Draft {
		return toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: s}}
	}
	round := toolmark.Draft{Type: toolmark.EventRoundStarted, Data: toolmark.RoundStartedData{Round: 2}}
	long := strings.Repeat("x", maxMergedText)
	emit(text("Hello, "))
	emit(text("world."))
	emit(round)
	emit(text(" After"))
	emit(text(" the round."))
	emit(text(long))
	var got []string
	for i, p := range j.pending {
		if p.seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, p.seq)
		}
		if d, ok := p.d.Data.(toolmark.TextDeltaData); ok {
			got = append(got, shorten(d.Text))
		} else {
			got = append(got, string(p.d.Type))
		}
	}
	want := []string{"Hello, world.", "round_started", " After the round.", shorten(long)}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("pending events %q, want %q", got, want)
	}
	if j.nextSeq != int64(len(want)+1) {
		t.Fatalf("next seq %d after %d events", j.nextSeq, len(want))
	}
	if c := j.state.Content(); c != "Hello, world. After the round."+long {
		t.Fatalf("the answer reads %q", shorten(c))
	}
	// Taken by a commit, the text waits no more: the next starts anew.
	if _, _, ok := j.take(); !ok {
		t.Fatal("nothing to take")
	}
	emit(text("next"))
	if len(j.pending) != 1 || j.pending[0].seq != int64(len(want)+1) {
		t.Fatalf("after a take: %d pending events", len(j.pending))
	}
}

// shorten stands a long text for its length in a test's message.
func shorten(s string) string {
	if len(s) > 40 {
		return fmt.Sprintf("%.20s… (%d bytes)", s, len(s))
	}
	return s
}
