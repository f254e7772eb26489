package toolcallmarkup

import (
	"reflect"
	"strings"
	"testing"
)

func TestRewrite(t *testing.T) {
	pending := Markup(ToolCall{ID: "call_1", Type: "t", Status: StatusPending, Attrs: []Attr{{"query", "q"}}})
	run := Markup(ToolCall{ID: "call_1", Type: "t", Status: StatusRunning, Attrs: []Attr{{"query", "q"}}})
	failed := Markup(ToolCall{ID: "call_1", Type: "t", Status: StatusError, Error: "boom"})
	withErr := Markup(ToolCall{ID: "call_1", Type: "t", Status: StatusRunning, Error: "retrying"})
	tests := []struct {
		name    string
		content string
		id      string
		u       Update
		want    string
		kind    string
	}{
		{"pending to running", "a" + pending + "b", "call_1", Update{Status: StatusRunning}, "a" + run + "b", ""},
		{"running to success with extra", run, "call_1", Update{Status: StatusSuccess, Extra: []Attr{{"count", "3"}}},
			Markup(ToolCall{ID: "call_1", Type: "t", Status: StatusSuccess, Attrs: []Attr{{"query", "q"}, {"count", "3"}}}), ""},
		{"extra replaces in place", run, "call_1", Update{Extra: []Attr{{"query", "new"}}},
			Markup(ToolCall{ID: "call_1", Type: "t", Status: StatusRunning, Attrs: []Attr{{"query", "new"}}}), ""},
		{"pending to error", pending, "call_1", Update{Status: StatusError, Error: "x"},
			Markup(ToolCall{ID: "call_1", Type: "t", Status: StatusError, Error: "x", Attrs: []Attr{{"query", "q"}}}), ""},
		{"success removes stale error", withErr, "call_1", Update{Status: StatusSuccess, Error: "ignored"},
			Markup(ToolCall{ID: "call_1", Type: "t", Status: StatusSuccess}), ""},
		{"empty status keeps status", pending, "call_1", Update{}, pending, ""},
		{"same status is identity", run, "call_1", Update{Status: StatusRunning}, run, ""},
		{"running to pending", run, "call_1", Update{Status: StatusPending}, run, "transition"},
		{"final stays", failed, "call_1", Update{Status: StatusSuccess}, failed, "final"},
		{"final stays for same status", failed, "call_1", Update{Status: StatusError, Error: "other"}, failed, "final"},
		{"final stays for extra", failed, "call_1", Update{Extra: []Attr{{"count", "1"}}}, failed, "final"},
		{"unknown status", run, "call_1", Update{Status: "done"}, run, "invalid"},
		{"reserved extra", run, "call_1", Update{Extra: []Attr{{"status", "success"}}}, run, "invalid"},
		{"reserved error extra", run, "call_1", Update{Extra: []Attr{{"error", "x"}}}, run, "invalid"},
		{"invalid extra key", run, "call_1", Update{Extra: []Attr{{"a b", "x"}}}, run, "invalid"},
		{"missing", run, "call_2", Update{Status: StatusSuccess}, run, "not_found"},
		{"empty content", "", "call_1", Update{Status: StatusSuccess}, "", "not_found"},
		{"dollar sequences stay literal", "$& $' $1 " + run + " $` $$", "call_1",
			Update{Status: StatusError, Error: "$& $' $` $1 $$ ${1}"},
			"$& $' $1 " + Markup(ToolCall{ID: "call_1", Type: "t", Status: StatusError, Error: "$& $' $` $1 $$ ${1}", Attrs: []Attr{{"query", "q"}}}) + " $` $$", ""},
		{"only the opening tag changes", "pre " + strings.TrimSuffix(run, "</ToolCall>") + "body</ToolCall> post", "call_1", Update{Status: StatusSuccess},
			"pre " + strings.TrimSuffix(Markup(ToolCall{ID: "call_1", Type: "t", Status: StatusSuccess, Attrs: []Attr{{"query", "q"}}}), "</ToolCall>") + "body</ToolCall> post", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Rewrite(tt.content, tt.id, tt.u)
			if k := errKind(err); k != tt.kind {
				t.Errorf("error got %v (%q), want %q", err, k, tt.kind)
			}
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// TestExactID checks that ids are matched exactly, by Rewrite and by
// Document.Update, never by prefix, letter case or another attribute.
func TestExactID(t *testing.T) {
	ids := []string{"call_10", "CALL_1", "call_1 ", " call_1", "call_1\u00a0", "xcall_1", "call_"}
	tests := []struct {
		name string
		id   string
	}{
		{"plain", "call_1"},
		{"quote", `call"1`},
		{"apostrophe", "call'1"},
		{"ampersand", "call&1"},
		{"entity look-alike", "call&amp;1"},
		{"angle brackets", "<call_1>"},
		{"unicode", "调用_1🌍"},
		{"spaces", "call 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustDocument(t, "")
			// Decoys: similar ids, and a child whose parentToolCallId
			// is the target id, started before the target.
			for _, id := range ids {
				if id != tt.id {
					mustStart(t, d, running(id))
				}
			}
			mustStart(t, d, running("parent"))
			d.AppendText(`text naming toolCallId="` + tt.id + `" and <ToolCall type="x" status="running" toolCallId="` + tt.id + `"></ToolCall>`)
			d.Flush()
			mustStart(t, d, ToolCall{ID: "child", ParentID: "parent", Type: "t", Status: StatusRunning,
				Attrs: []Attr{{"ref", tt.id}, {"parentToolCallId_", tt.id}}})
			before := d.String()

			if _, err := d.Update(tt.id, Update{Status: StatusSuccess}); errKind(err) != "not_found" {
				t.Errorf("Update before Start got %v, want not_found", err)
			}
			if got, err := Rewrite(before, tt.id, Update{Status: StatusSuccess}); errKind(err) != "not_found" || got != before {
				t.Errorf("Rewrite before Start got %v, want not_found and input", err)
			}
			mustStart(t, d, running(tt.id))
			content := d.String()
			viaRewrite := mustRewrite(t, content, tt.id, Update{Status: StatusSuccess})
			mustUpdate(t, d, tt.id, Update{Status: StatusSuccess})
			if got := d.String(); got != viaRewrite {
				t.Errorf("Document.Update got %s, want %s (Rewrite)", got, viaRewrite)
			}
			for _, tc := range Parse(viaRewrite) {
				want := StatusRunning
				if tc.ID == tt.id {
					want = StatusSuccess
				}
				if tc.Status != want {
					t.Errorf("call %q got status %s, want %s", tc.ID, tc.Status, want)
				}
			}
			if !strings.HasPrefix(viaRewrite, before) {
				t.Errorf("content before the target changed:\n got %s\nwant prefix %s", viaRewrite, before)
			}
		})
	}
}

// TestRewriteFindsWhatParseFinds checks that a tag Parse returns can be
// rewritten by its id even when its values are not written in the
// canonical way (content from another writer).
func TestRewriteFindsWhatParseFinds(t *testing.T) {
	tests := []struct {
		name    string
		content string
		id      string
	}{
		{"raw apostrophe", `<ToolCall type="t" status="running" toolCallId="a'b"></ToolCall>`, "a'b"},
		{"hex reference", `<ToolCall type="t" status="running" toolCallId="a&#x27;b"></ToolCall>`, "a'b"},
		{"apos reference", `<ToolCall type="t" status="running" toolCallId="a&apos;b"></ToolCall>`, "a'b"},
		{"decimal reference for letter", `<ToolCall type="t" status="running" toolCallId="&#99;all_1"></ToolCall>`, "call_1"},
		{"two spaces before id", `<ToolCall type="t" status="running"  toolCallId="call_1"></ToolCall>`, "call_1"},
		{"id first", `<ToolCall toolCallId="call_1" type="t" status="running"></ToolCall>`, "call_1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := Parse(tt.content)
			if len(calls) != 1 || calls[0].ID != tt.id {
				t.Fatalf("Parse got %#v, want one call %q", calls, tt.id)
			}
			got := mustRewrite(t, tt.content, tt.id, Update{Status: StatusSuccess})
			want := []ToolCall{{ID: tt.id, Type: "t", Status: StatusSuccess}}
			if p := Parse(got); !reflect.DeepEqual(p, want) {
				t.Errorf("got %#v, want %#v", p, want)
			}
		})
	}
}
