package toolcallmarkup

import (
	"reflect"
	"strings"
	"testing"
)

func TestDocumentStart(t *testing.T) {
	tests := []struct {
		name  string
		setup []ToolCall
		tc    ToolCall
		kind  string
		want  string // content after Start
	}{
		{"top level", nil, running("a"), "", Markup(running("a"))},
		{"empty status means pending", nil, ToolCall{ID: "a", Type: "t"}, "",
			Markup(ToolCall{ID: "a", Type: "t", Status: StatusPending})},
		{"duplicate", []ToolCall{running("a")}, running("a"), "duplicate", Markup(running("a"))},
		{"duplicate of nested", []ToolCall{running("p"), {ID: "a", ParentID: "p", Type: "t", Status: StatusRunning}},
			running("a"), "duplicate",
			OpenTag(running("p")) + Markup(ToolCall{ID: "a", ParentID: "p", Type: "t", Status: StatusRunning}) + closeTag},
		{"nested", []ToolCall{running("p")}, ToolCall{ID: "c", ParentID: "p", Type: "t", Status: StatusRunning}, "",
			OpenTag(running("p")) + Markup(ToolCall{ID: "c", ParentID: "p", Type: "t", Status: StatusRunning}) + closeTag},
		{"missing parent", nil, ToolCall{ID: "c", ParentID: "p", Type: "t", Status: StatusRunning}, "not_found", ""},
		{"final parent", []ToolCall{{ID: "p", Type: "t", Status: StatusSuccess}},
			ToolCall{ID: "c", ParentID: "p", Type: "t", Status: StatusRunning}, "final",
			Markup(ToolCall{ID: "p", Type: "t", Status: StatusSuccess})},
		{"invalid", nil, ToolCall{ID: "", Type: "t"}, "invalid", ""},
		{"reserved attr", nil, running("a", Attr{"status", "success"}), "invalid", ""},
		{"own parent", nil, ToolCall{ID: "a", ParentID: "a", Type: "t"}, "invalid", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustDocument(t, "")
			for _, tc := range tt.setup {
				mustStart(t, d, tc)
			}
			open, err := d.Start(tt.tc)
			if k := errKind(err); k != tt.kind {
				t.Fatalf("error got %v (%q), want %q", err, k, tt.kind)
			}
			if err == nil {
				if want := OpenTag(Normalize(withPending(tt.tc))); open != want {
					t.Errorf("open tag got %s, want %s", open, want)
				}
			} else if open != "" {
				t.Errorf("open tag got %q on error, want empty", open)
			}
			if got := d.String(); got != tt.want {
				t.Errorf("content got %s, want %s", got, tt.want)
			}
			if d.Len() != len(d.String()) {
				t.Errorf("Len got %d, want %d", d.Len(), len(d.String()))
			}
		})
	}
}

func withPending(tc ToolCall) ToolCall {
	if tc.Status == "" {
		tc.Status = StatusPending
	}
	return tc
}

func TestDocumentUpdate(t *testing.T) {
	tests := []struct {
		name    string
		initial ToolCall
		updates []Update
		kinds   []string
		want    ToolCall
	}{
		{"pending running success", ToolCall{ID: "a", Type: "t", Status: StatusPending},
			[]Update{{Status: StatusRunning}, {Status: StatusSuccess}}, []string{"", ""},
			ToolCall{ID: "a", Type: "t", Status: StatusSuccess}},
		{"pending straight to error", ToolCall{ID: "a", Type: "t", Status: StatusPending},
			[]Update{{Status: StatusError, Error: "boom"}}, []string{""},
			ToolCall{ID: "a", Type: "t", Status: StatusError, Error: "boom"}},
		{"running back to pending", running("a"),
			[]Update{{Status: StatusPending}}, []string{"transition"}, running("a")},
		{"success then error", running("a"),
			[]Update{{Status: StatusSuccess}, {Status: StatusError, Error: "x"}}, []string{"", "final"},
			ToolCall{ID: "a", Type: "search_documents", Status: StatusSuccess}},
		{"error then success", running("a"),
			[]Update{{Status: StatusError, Error: "x"}, {Status: StatusSuccess}}, []string{"", "final"},
			ToolCall{ID: "a", Type: "search_documents", Status: StatusError, Error: "x"}},
		{"cancelled then extra", running("a"),
			[]Update{{Status: StatusCancelled}, {Extra: []Attr{{"count", "1"}}}}, []string{"", "final"},
			ToolCall{ID: "a", Type: "search_documents", Status: StatusCancelled}},
		{"success then same status", running("a"),
			[]Update{{Status: StatusSuccess}, {Status: StatusSuccess}}, []string{"", "final"},
			ToolCall{ID: "a", Type: "search_documents", Status: StatusSuccess}},
		{"success removes stale error", ToolCall{ID: "a", Type: "t", Status: StatusRunning, Error: "retry 1"},
			[]Update{{Status: StatusSuccess, Error: "ignored"}}, []string{""},
			ToolCall{ID: "a", Type: "t", Status: StatusSuccess}},
		{"error text while running", running("a"),
			[]Update{{Error: "retrying"}}, []string{""},
			ToolCall{ID: "a", Type: "search_documents", Status: StatusRunning, Error: "retrying"}},
		{"extra sets and replaces in first-set order", running("a", Attr{"query", "q"}),
			[]Update{{Extra: []Attr{{"count", "1"}}}, {Status: StatusSuccess, Extra: []Attr{{"url", "u"}, {"query", "q2"}, {"count", "2"}}}},
			[]string{"", ""},
			ToolCall{ID: "a", Type: "search_documents", Status: StatusSuccess, Attrs: []Attr{{"query", "q2"}, {"count", "2"}, {"url", "u"}}}},
		{"extra truncated", running("a"),
			[]Update{{Extra: []Attr{{"query", strings.Repeat("é", 250)}}}}, []string{""},
			running("a", Attr{"query", strings.Repeat("é", 200)})},
		{"error truncated", running("a"),
			[]Update{{Status: StatusError, Error: strings.Repeat("€", 301)}}, []string{""},
			ToolCall{ID: "a", Type: "search_documents", Status: StatusError, Error: strings.Repeat("€", 300)}},
		{"reserved extra refused", running("a"),
			[]Update{{Extra: []Attr{{"query", "q"}, {"toolCallId", "b"}}}}, []string{"invalid"}, running("a")},
		{"parent extra refused", running("a"),
			[]Update{{Extra: []Attr{{"parentToolCallId", "b"}}}}, []string{"invalid"}, running("a")},
		{"invalid key refused", running("a"),
			[]Update{{Extra: []Attr{{"9", "b"}}}}, []string{"invalid"}, running("a")},
		{"unknown status refused", running("a"),
			[]Update{{Status: "ok"}}, []string{"invalid"}, running("a")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustDocument(t, "")
			d.AppendText("before ")
			mustStart(t, d, tt.initial)
			d.AppendText(" after")
			d.Flush()
			for i, u := range tt.updates {
				before := d.String()
				open, err := d.Update(tt.initial.ID, u)
				if k := errKind(err); k != tt.kinds[i] {
					t.Fatalf("update %d: error got %v (%q), want %q", i, err, k, tt.kinds[i])
				}
				if err != nil {
					if got := d.String(); got != before {
						t.Errorf("update %d: content changed on error: got %s, want %s", i, got, before)
					}
					continue
				}
				got, _ := d.Get(tt.initial.ID)
				if open != OpenTag(got) {
					t.Errorf("update %d: open tag got %s, want %s", i, open, OpenTag(got))
				}
				// Rewrite on the string agrees with Document.Update.
				if rw := mustRewrite(t, before, tt.initial.ID, u); rw != d.String() {
					t.Errorf("update %d: Rewrite got %s, want %s", i, rw, d.String())
				}
			}
			got, ok := d.Get(tt.initial.ID)
			if !ok || !reflect.DeepEqual(got, Normalize(tt.want)) {
				t.Errorf("got %#v, want %#v", got, Normalize(tt.want))
			}
			want := "before " + Markup(tt.want) + " after"
			if d.String() != want {
				t.Errorf("content got %s, want %s", d.String(), want)
			}
			if d.Len() != len(d.String()) {
				t.Errorf("Len got %d, want %d", d.Len(), len(d.String()))
			}
			if p := Parse(d.String()); !reflect.DeepEqual(p, []ToolCall{Normalize(tt.want)}) {
				t.Errorf("Parse got %#v, want %#v", p, []ToolCall{Normalize(tt.want)})
			}
		})
	}
}

func TestDocumentUpdateNotFound(t *testing.T) {
	d := mustDocument(t, "")
	d.AppendText(`<ToolCall type="t" status="running" toolCallId="a"></ToolCall>`)
	d.Flush()
	before := d.String()
	if _, err := d.Update("a", Update{Status: StatusSuccess}); errKind(err) != "not_found" {
		t.Errorf("got %v, want not_found", err)
	}
	if d.String() != before {
		t.Errorf("got %s, want %s", d.String(), before)
	}
	if _, ok := d.Get("a"); ok {
		t.Errorf("Get got true, want false")
	}
}

func TestDocumentFinalize(t *testing.T) {
	d := mustDocument(t, "")
	mustStart(t, d, running("p"))                                                    // top level, running
	mustStart(t, d, ToolCall{ID: "q", Type: "t", Status: StatusSuccess})             // top level, final
	mustStart(t, d, ToolCall{ID: "r", Type: "t"})                                    // top level, pending
	mustStart(t, d, ToolCall{ID: "c1", ParentID: "p", Type: "t"})                    // inside p, started after r
	mustStart(t, d, ToolCall{ID: "c2", ParentID: "c1", Type: "t"})                   // inside c1
	mustStart(t, d, ToolCall{ID: "c3", ParentID: "p", Type: "t", Status: "running"}) // inside p, after c1
	mustUpdate(t, d, "c3", Update{Status: StatusError, Error: "x"})
	d.AppendText("tail")

	tests := []struct {
		name    string
		status  Status
		errText string
		want    []string
		wantErr string
	}{
		{"not final is refused", StatusRunning, "", nil, ""},
		{"error in document order", StatusError, "interrupted", []string{"p", "c1", "c2", "r"}, "interrupted"},
		{"again changes nothing", StatusCancelled, "", nil, "interrupted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := d.Finalize(tt.status, tt.errText)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if tt.status.Final() {
				for _, tc := range Parse(d.String()) {
					if !tc.Status.Final() {
						t.Errorf("call %q got %s, want a final status", tc.ID, tc.Status)
					}
				}
			}
			for _, id := range []string{"p", "c1", "c2", "r"} {
				if tc, _ := d.Get(id); tc.Error != tt.wantErr {
					t.Errorf("call %q error got %q, want %q", id, tc.Error, tt.wantErr)
				}
			}
		})
	}
	// Calls, Parse and the ids Finalize returned share one order.
	var ids, parsed []string
	for _, tc := range d.Calls() {
		ids = append(ids, tc.ID)
	}
	for _, tc := range Parse(d.String()) {
		parsed = append(parsed, tc.ID)
	}
	want := []string{"p", "c1", "c2", "c3", "q", "r"}
	if !reflect.DeepEqual(ids, want) || !reflect.DeepEqual(parsed, want) {
		t.Errorf("Calls got %v, Parse got %v, want %v", ids, parsed, want)
	}
	if tc, _ := d.Get("q"); tc.Status != StatusSuccess {
		t.Errorf("final call q got %s, want success", tc.Status)
	}
	if tc, _ := d.Get("c3"); tc.Error != "x" {
		t.Errorf("final call c3 error got %q, want %q", tc.Error, "x")
	}
}

func TestDocumentFinalizeSuccess(t *testing.T) {
	d := mustDocument(t, "")
	mustStart(t, d, ToolCall{ID: "a", Type: "t", Status: StatusRunning, Error: "stale"})
	if got := d.Finalize(StatusSuccess, "ignored"); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("got %v, want [a]", got)
	}
	if tc, _ := d.Get("a"); tc.Status != StatusSuccess || tc.Error != "" {
		t.Errorf("got %s %q, want success without error", tc.Status, tc.Error)
	}
}

func TestDocumentNesting(t *testing.T) {
	d := mustDocument(t, "")
	d.AppendText("Let me delegate. ")
	mustStart(t, d, ToolCall{ID: "agent", Type: "subagent", Status: StatusRunning})
	d.AppendText("Meanwhile. ")
	mustStart(t, d, ToolCall{ID: "s1", ParentID: "agent", Type: "search", Status: StatusRunning})
	mustStart(t, d, ToolCall{ID: "s2", ParentID: "s1", Type: "fetch", Status: StatusPending})
	mustUpdate(t, d, "s2", Update{Status: StatusSuccess})
	mustUpdate(t, d, "s1", Update{Status: StatusSuccess})
	mustUpdate(t, d, "agent", Update{Status: StatusSuccess})
	if _, err := d.Start(ToolCall{ID: "late", ParentID: "agent", Type: "t"}); errKind(err) != "final" {
		t.Errorf("Start under final parent got %v, want final", err)
	}
	want := "Let me delegate. " +
		OpenTag(ToolCall{ID: "agent", Type: "subagent", Status: StatusSuccess}) +
		OpenTag(ToolCall{ID: "s1", ParentID: "agent", Type: "search", Status: StatusSuccess}) +
		Markup(ToolCall{ID: "s2", ParentID: "s1", Type: "fetch", Status: StatusSuccess}) +
		closeTag + closeTag + "Meanwhile. "
	if got := d.String(); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	spans := Scan(d.String())
	parents := []int{-1, 0, 1}
	for i, s := range spans {
		if s.Parent != parents[i] {
			t.Errorf("span %d parent got %d, want %d", i, s.Parent, parents[i])
		}
	}
	// Reloading gives the same tree.
	r := mustDocument(t, d.String())
	if !reflect.DeepEqual(r.Calls(), d.Calls()) {
		t.Errorf("reloaded Calls got %#v, want %#v", r.Calls(), d.Calls())
	}
}

func TestNewDocument(t *testing.T) {
	// Content written by a Document, including hostile text, nesting and
	// every status.
	w := mustDocument(t, "")
	w.AppendText("Hi <ToolCall type=\"x\" status=\"success\" toolCallId=\"a\"></ToolCall> &lt;toolcall ")
	mustStart(t, w, running("a", Attr{"query", "q\n\"x\""}))
	mustStart(t, w, ToolCall{ID: "b", ParentID: "a", Type: "t", Status: StatusPending})
	w.AppendText("é\xff\x00 </ToolCall> <Tool")
	mustStart(t, w, ToolCall{ID: "c", Type: "t", Status: StatusError, Error: "e"})
	w.AppendText("end <")
	w.Flush()
	written := w.String()

	const a = `<ToolCall type="t" status="running" toolCallId="a">`
	tests := []struct {
		name    string
		content string
		kind    string
	}{
		{"empty", "", ""},
		{"text", "plain text & <b>html</b>", ""},
		{"written by a document", written, ""},
		{"unclosed element", "x" + a + "body", ""},
		{"stray close", "</ToolCall>x" + a + "</ToolCall></ToolCall>", ""},
		{"foreign attribute order", `<ToolCall toolCallId="z" type="t" status="running" extra="1"></ToolCall>`, ""},
		{"invalid UTF-8", "a\xffb", "invalid"},
		{"NUL", "a\x00b", "invalid"},
		{"duplicate ids", a + "</ToolCall>" + a + "</ToolCall>", "duplicate"},
		{"duplicate nested id", a + a + "</ToolCall></ToolCall>", "duplicate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := NewDocument(tt.content)
			if k := errKind(err); k != tt.kind {
				t.Fatalf("error got %v (%q), want %q", err, k, tt.kind)
			}
			if err != nil {
				if d != nil {
					t.Errorf("got a Document with an error")
				}
				return
			}
			if got := d.String(); got != tt.content {
				t.Errorf("String got %q, want %q", got, tt.content)
			}
			if d.Len() != len(tt.content) {
				t.Errorf("Len got %d, want %d", d.Len(), len(tt.content))
			}
			if got, want := d.Calls(), Parse(tt.content); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Errorf("Calls got %#v, want %#v", got, want)
			}
		})
	}

	// A reloaded Document continues where the writer stopped.
	r := mustDocument(t, written)
	for _, d := range []*Document{w, r} {
		mustUpdate(t, d, "b", Update{Status: StatusRunning})
		mustUpdate(t, d, "a", Update{Status: StatusSuccess, Extra: []Attr{{"count", "2"}}})
		if _, err := d.Update("c", Update{Status: StatusSuccess}); errKind(err) != "final" {
			t.Errorf("got %v, want final", err)
		}
		d.AppendText(" more")
		mustStart(t, d, ToolCall{ID: "d", ParentID: "b", Type: "t"})
		d.Finalize(StatusCancelled, "")
	}
	if r.String() != w.String() {
		t.Errorf("reloaded got %s, want %s", r.String(), w.String())
	}
}

func TestDocumentGetCopies(t *testing.T) {
	d := mustDocument(t, "")
	mustStart(t, d, running("a", Attr{"query", "q"}))
	tc, _ := d.Get("a")
	tc.Attrs[0].Value = "changed"
	calls := d.Calls()
	calls[0].Attrs[0].Value = "changed"
	if got, _ := d.Get("a"); got.Attrs[0].Value != "q" {
		t.Errorf("got %q, want %q", got.Attrs[0].Value, "q")
	}
	if !strings.Contains(d.String(), `query="q"`) {
		t.Errorf("content changed: %s", d.String())
	}
}

func TestAppendNeutralised(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"neutralised text as is", "a &lt;ToolCall x", "a &lt;ToolCall x"},
		{"raw tag escaped", `<ToolCall type="t" status="success" toolCallId="a"></ToolCall>`,
			`&lt;ToolCall type="t" status="success" toolCallId="a">&lt;/ToolCall>`},
		{"other html kept", "<b>x</b>", "<b>x</b>"},
		{"invalid bytes replaced", "a\xff\x00", "a\uFFFD\uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustDocument(t, "")
			d.AppendNeutralised(tt.in)
			if got := d.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if d.Len() != len(d.String()) {
				t.Errorf("Len got %d, want %d", d.Len(), len(d.String()))
			}
			if p := Parse(d.String()); len(p) != 0 {
				t.Errorf("Parse got %v, want none", p)
			}
		})
	}
}

// TestUpdateStructuralParent checks that a Document loaded from content in
// which a nested tag names its parent only by position updates that tag as
// Rewrite does: without adding a parentToolCallId attribute.
func TestUpdateStructuralParent(t *testing.T) {
	const content = `<ToolCall type="agent" status="running" toolCallId="p">` +
		`<ToolCall type="t" status="running" toolCallId="c"></ToolCall></ToolCall>`
	d := mustDocument(t, content)
	if tc, _ := d.Get("c"); tc.ParentID != "p" {
		t.Errorf("ParentID got %q, want %q", tc.ParentID, "p")
	}
	tests := []struct {
		name string
		u    Update
	}{
		{"same status", Update{Status: StatusRunning}},
		{"extra", Update{Extra: []Attr{{"count", "1"}}}},
		{"success", Update{Status: StatusSuccess}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := d.String()
			want := mustRewrite(t, before, "c", tt.u)
			mustUpdate(t, d, "c", tt.u)
			if got := d.String(); got != want {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
	if d.String() != `<ToolCall type="agent" status="running" toolCallId="p">`+
		`<ToolCall type="t" status="success" toolCallId="c" count="1"></ToolCall></ToolCall>` {
		t.Errorf("got %s", d.String())
	}
	if tc, _ := d.Get("c"); tc.ParentID != "p" {
		t.Errorf("ParentID after update got %q, want %q", tc.ParentID, "p")
	}
}

// TestAppendAfterUnclosed checks that what a Document appends after an
// element left unclosed in stored content does not end up inside it: the
// Document's calls and Parse of its content agree, before and after a
// reload.
func TestAppendAfterUnclosed(t *testing.T) {
	const a = `<ToolCall type="agent" status="running" toolCallId="a">`
	const b = `<ToolCall type="t" status="running" toolCallId="b" parentToolCallId="a">`
	tests := []struct {
		name    string
		content string
		do      func(d *Document)
		want    string
	}{
		{"nothing appended keeps it unclosed", "x" + a + "body", func(d *Document) {
			mustUpdate(t, d, "a", Update{Status: StatusError, Error: "interrupted"})
		}, "x" + `<ToolCall type="agent" status="error" toolCallId="a" error="interrupted">` + "body"},
		{"text", "x" + a + "body", func(d *Document) { d.AppendText(" more"); d.Flush() },
			"x" + a + "body</ToolCall> more"},
		{"top-level call", "x" + a, func(d *Document) { mustStart(t, d, running("c")) },
			"x" + a + "</ToolCall>" + Markup(running("c"))},
		{"nested call goes inside", "x" + a, func(d *Document) {
			mustStart(t, d, ToolCall{ID: "c", ParentID: "a", Type: "t", Status: StatusRunning})
		}, "x" + a + Markup(ToolCall{ID: "c", ParentID: "a", Type: "t", Status: StatusRunning})},
		{"nested in outer closes inner", a + b, func(d *Document) {
			mustStart(t, d, ToolCall{ID: "c", ParentID: "a", Type: "t", Status: StatusRunning})
		}, a + b + "</ToolCall>" + Markup(ToolCall{ID: "c", ParentID: "a", Type: "t", Status: StatusRunning})},
		{"both closed by text", a + b, func(d *Document) { d.AppendNeutralised("t") },
			a + b + "</ToolCall></ToolCall>t"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustDocument(t, tt.content)
			tt.do(d)
			if got := d.String(); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if d.Len() != len(d.String()) {
				t.Errorf("Len got %d, want %d", d.Len(), len(d.String()))
			}
			if got, want := d.Calls(), Parse(d.String()); !reflect.DeepEqual(got, want) {
				t.Errorf("Calls got %#v, Parse %#v", got, want)
			}
		})
	}
}
