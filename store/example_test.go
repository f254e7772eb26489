package store_test

import (
	"errors"
	"fmt"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/store"
)

// ExampleRefusedError shows how the caller of a group commit tells the
// turns whose writes were refused from those that were committed.
func ExampleRefusedError() {
	// What Commit returns when another replica took over turn t2.
	var err error = &store.RefusedError{Turns: map[string]error{"t2": store.ErrLeaseLost}}

	var refused *store.RefusedError
	for _, id := range []string{"t1", "t2"} {
		why, ok := error(nil), false
		if errors.As(err, &refused) {
			why, ok = refused.Turns[id]
		}
		switch {
		case !ok:
			fmt.Println(id, "committed")
		case errors.Is(why, store.ErrLeaseLost):
			fmt.Println(id, "lost: stop the turn, another replica has it")
		default:
			fmt.Println(id, "refused:", why)
		}
	}
	// Output:
	// t1 committed
	// t2 lost: stop the turn, another replica has it
}

// ExampleHistoryAfter drops the turns a conversation's summary already
// covers from its history.
func ExampleHistoryAfter() {
	hist := []toolmark.HistoryTurn{{TurnID: "t1", UserText: "hi"}, {TurnID: "t2", UserText: "and then?"}, {TurnID: "t3", UserText: "thanks"}}
	for _, h := range store.HistoryAfter(hist, "t2") {
		fmt.Println(h.TurnID, h.UserText)
	}
	// Output:
	// t3 thanks
}
