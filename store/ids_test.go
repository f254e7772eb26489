package store_test

import (
	"slices"
	"testing"
	"time"
)

// TestIDsGrowWithTime: the ids the store makes — of conversations, turns
// and their messages — are UUIDs of version 7, and one made later sorts
// after one made earlier, so that new rows' keys go to the end of each
// index instead of a random page of it (sql/011).
func TestIDsGrowWithTime(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var ordered, all []string
	for range 4 {
		// Ids of the same millisecond are in random order.
		time.Sleep(2 * time.Millisecond)
		c := mustConversation(t, f.db, f.user.ID)
		time.Sleep(2 * time.Millisecond)
		tu := mustTurn(t, f.db, f.user.ID, c.ID, "q")
		ordered = append(ordered, c.ID, tu.ID)
		all = append(all, c.ID, tu.ID, tu.UserMessageID, tu.AssistantMessageID)
	}
	for _, id := range all {
		if len(id) != 36 || id[8] != '-' || id[13] != '-' || id[14] != '7' || id[18] != '-' || id[23] != '-' || !slices.Contains([]byte("89ab"), id[19]) {
			t.Errorf("id %q is not a UUID of version 7", id)
		}
	}
	if !slices.IsSorted(ordered) {
		t.Errorf("ids made one after another are not in order:\n%q", ordered)
	}
}
