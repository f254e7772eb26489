package markdown

import (
	"strings"
	"testing"
	"time"

	"github.com/dlclark/regexp2"
)

// TestRegexpClockAfterPause: chroma gives each rule's regular expression a
// 250 ms match timeout, which regexp2 checks against a clock of its own that
// a goroutine advances every 100 ms and stops a second after the last
// deadline. Before regexp2 v1.11.5 the first expressions after a pause took
// their deadlines from the stopped clock, and its next tick timed one of
// them out: a chroma rule that did not match where it should, code coloured
// otherwise, and a message stored with that rendering (a live view that
// differed from the final one, under load). No expression may time out
// after a pause.
func TestRegexpClockAfterPause(t *testing.T) {
	re := regexp2.MustCompile(`\G(?:[a-z]+\s*)`, 0)
	re.MatchTimeout = 250 * time.Millisecond // as chroma sets it
	text := []rune(strings.Repeat("word ", 2000))
	match := func(d time.Duration) (runs, timeouts int) {
		for start := time.Now(); time.Since(start) < d; {
			for pos := 0; pos < len(text); runs++ {
				m, err := re.FindRunesMatchStartingAt(text, pos)
				if err != nil {
					timeouts++
					pos++
					continue
				}
				if m == nil {
					break
				}
				pos = m.Index + m.Length
			}
		}
		return runs, timeouts
	}
	if runs, timeouts := match(50 * time.Millisecond); timeouts > 0 {
		t.Fatalf("%d of %d matches timed out before the pause", timeouts, runs)
	}
	// The clock stops about 1.4 s after the last deadline; a deadline
	// taken from it then would be stale by the rest of the pause.
	time.Sleep(2500 * time.Millisecond)
	// Match for longer than a tick, so that the tick that restarts the
	// clock comes while an expression runs.
	if runs, timeouts := match(300 * time.Millisecond); timeouts > 0 {
		t.Errorf("%d of %d matches timed out after a pause", timeouts, runs)
	}
}
