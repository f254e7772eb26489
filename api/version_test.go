package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// TestVersions: an earlier question edited, then its first version chosen
// again, shows the first branch whole (the question after it included),
// with "versions" on the question; choosing the edit again brings the
// second branch back; the export holds the chosen branch and says which
// version it is; a conversation with an answer being written, or another
// user, is refused.
func TestVersions(t *testing.T) {
	srv, alice, bob := tokenServerWith(t, testserver.Options{DemoDelay: 5 * time.Millisecond})
	wait := func(id string) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := srv.App.Runner.Wait(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	conv := alice.newConversation()
	for _, q := range []string{"What is a lease?", "How does resume work?", "What is a snapshot?"} {
		wait(alice.postTurn(conv, q).ID)
	}
	type view struct {
		toolmark.Message
		Versions []string `json:"versions"`
	}
	page := func() []view {
		var p struct{ Messages []view }
		alice.mustJSON("GET", "/api/conversations/"+conv, "", 200, &p)
		return p.Messages
	}
	questions := func(ms []view) string {
		var qs []string
		for _, m := range ms {
			if m.Role == toolmark.RoleUser {
				qs = append(qs, m.Content)
			}
		}
		return strings.Join(qs, " | ")
	}
	first := page()
	q2 := first[2]
	var out struct{ Turn toolmark.Turn }
	alice.mustJSON("POST", "/api/messages/"+q2.ID+"/edit", `{"content":"How does cancellation work?"}`, 202, &out)
	wait(out.Turn.ID)
	edited := page()
	if got := questions(edited); got != "What is a lease? | How does cancellation work?" {
		t.Fatalf("after the edit: %s", got)
	}
	if v := edited[2].Versions; len(v) != 2 || v[0] != q2.ID || v[1] != edited[2].ID {
		t.Fatalf("versions of the edited question: %v", v)
	}
	if edited[0].Versions != nil {
		t.Errorf("a question asked once has versions: %v", edited[0].Versions)
	}

	alice.mustJSON("POST", "/api/messages/"+q2.ID+"/select", "", 200, nil)
	back := page()
	if len(back) != len(first) || questions(back) != questions(first) {
		t.Fatalf("version 1 chosen: %s, want the first branch whole: %s", questions(back), questions(first))
	}
	for i := range back {
		if back[i].ID != first[i].ID || back[i].Content != first[i].Content {
			t.Errorf("message %d: %s %q, want %s", i, back[i].ID, back[i].Content, first[i].ID)
		}
	}
	if v := back[2].Versions; len(v) != 2 || v[0] != q2.ID {
		t.Errorf("versions of version 1: %v", v)
	}
	_, _, md := alice.do("GET", "/api/conversations/"+conv+"/export", "")
	if !strings.Contains(string(md), "*(version 1 of 2 of this question)*\n\nHow does resume work?") || !strings.Contains(string(md), "What is a snapshot?") {
		t.Errorf("the export does not hold the chosen branch:\n%s", md)
	}

	// Asked on the first branch, the model sees that branch.
	next := alice.postTurn(conv, "And after a crash?")
	st, _, _ := alice.do("POST", "/api/messages/"+edited[2].ID+"/select", "")
	if st != 409 {
		t.Errorf("choosing a version while an answer is written: %d, want 409", st)
	}
	wait(next.ID)
	alice.mustJSON("POST", "/api/messages/"+edited[2].ID+"/select", "", 200, nil)
	if got := questions(page()); got != "What is a lease? | How does cancellation work?" {
		t.Errorf("version 2 chosen again: %s", got)
	}
	alice.mustJSON("POST", "/api/messages/"+q2.ID+"/select", "", 200, nil)
	if got := questions(page()); got != "What is a lease? | How does resume work? | What is a snapshot? | And after a crash?" {
		t.Errorf("version 1 chosen again, with the question asked on it: %s", got)
	}
	if st, _, _ := bob.do("POST", "/api/messages/"+q2.ID+"/select", ""); st != 404 {
		t.Errorf("another user: %d, want 404", st)
	}
}
