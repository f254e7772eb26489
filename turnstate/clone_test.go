package turnstate

import (
	"reflect"
	"testing"

	"github.com/toolmark/toolmark"
)

// TestCloneAt cuts a turn's drafts at every point: a copy made there is
// the state of the drafts before the cut whatever its original goes on to
// apply, and, fed the rest, ends as the original does.
func TestCloneAt(t *testing.T) {
	ds := append(turnDrafts(), toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: " A held <Tool"}},
		toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: "Call back."}})
	for k := range len(ds) + 1 {
		orig, before := New(), New()
		mustApply(t, orig, ds[:k])
		mustApply(t, before, ds[:k])
		c := orig.CloneAt(int64(k))
		if c.Seq() != int64(k) || len(c.TakeChanges().Calls) != 0 {
			t.Fatalf("cut %d: the copy is at seq %d, or has changes to take", k, c.Seq())
		}
		mustApply(t, orig, ds[k:])
		if got, want := view(c), view(before); !reflect.DeepEqual(got, want) {
			t.Fatalf("cut %d: the copy changed with its original:\n got %+v\nwant %+v", k, got, want)
		}
		mustApply(t, c, ds[k:])
		if got, want := view(c), view(orig); !reflect.DeepEqual(got, want) {
			t.Fatalf("cut %d: the copy fed the rest ends as\n%+v\nwant %+v", k, got, want)
		}
	}
}

// view is what a client sees of a state.
func view(s *State) []any {
	return []any{s.Content(), s.Records(), s.Todos(), s.Bubble(), s.Status(), s.Usage(), s.Reasoning()}
}
