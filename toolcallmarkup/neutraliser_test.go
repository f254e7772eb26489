package toolcallmarkup

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestNeutraliserMatchesDocument: a Neutraliser writes the same text as a
// Document's AppendText for any split of the input.
func TestNeutraliserMatchesDocument(t *testing.T) {
	texts := []string{
		"plain", "<ToolCall type=\"x\" status=\"running\" toolCallId=\"a\">", "&lt;ToolCall", "&amp;amp;lt;toolcall",
		"</ToolCall>", "a < b && c > d", "\xe2\x82", "<Tool", "&", "&amp;", "x<toolcALL y",
		// Unicode, NUL, invalid UTF-8, and plain text before a tag.
		"naïve café 🙂 text", "nul\x00byte", "ok \xff bad", "plain then <ToolCall and plain",
	}
	for _, text := range texts {
		for step := 1; step <= len(text)+1; step++ {
			var z Neutraliser
			d := mustDocument(t, "")
			var got, want strings.Builder
			for i := 0; i < len(text); i += step {
				chunk := text[i:min(i+step, len(text))]
				got.WriteString(z.Write(chunk))
				want.WriteString(d.AppendText(chunk))
			}
			got.WriteString(z.Flush())
			want.WriteString(d.Flush())
			if got.String() != want.String() || got.String() != d.String() {
				t.Errorf("%q in steps of %d: neutraliser %q, document %q", text, step, got.String(), want.String())
			}
			if z.Held() {
				t.Errorf("%q: text held after Flush", text)
			}
		}
	}
}

// TestNeutraliserCopiesOnlyChanges: a chunk with nothing to replace comes
// back as itself, with no allocation; one with something to replace does not.
func TestNeutraliserCopiesOnlyChanges(t *testing.T) {
	var z Neutraliser
	for _, chunk := range []string{"three plain words ", "naïve café 🙂 "} {
		if n := testing.AllocsPerRun(20, func() { _ = z.Write(chunk) }); n != 0 {
			t.Errorf("Write(%q) allocates %v times, want 0", chunk, n)
		}
	}
	if n := testing.AllocsPerRun(20, func() { _ = z.Write("a <ToolCall b ") }); n == 0 {
		t.Error("Write of a tag allocates nothing: nothing was escaped")
	}
}

func TestParseOpenTag(t *testing.T) {
	tc := ToolCall{ID: "call_1", Type: "search_documents", Status: StatusRunning, ParentID: "p",
		Attrs: []Attr{{Key: "query", Value: `a "b" <c> & d`}}}
	got, err := ParseOpenTag(OpenTag(tc))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, Normalize(tc)) {
		t.Errorf("got %+v, want %+v", got, Normalize(tc))
	}
	for _, bad := range []string{"", "<ToolCall>", OpenTag(tc) + "x", "x" + OpenTag(tc), Markup(tc), `<ToolCall type="x" status="nope" toolCallId="a">`} {
		if _, err := ParseOpenTag(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseOpenTag(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

// FuzzParseOpenTag: whatever ParseOpenTag accepts, OpenTag writes back to a
// tag that parses to the same call.
func FuzzParseOpenTag(f *testing.F) {
	f.Add(`<ToolCall type="a" status="running" toolCallId="b" query="q">`)
	f.Add(`<ToolCall type="a" status="error" toolCallId="b" error="x&amp;y">`)
	f.Fuzz(func(t *testing.T, s string) {
		tc, err := ParseOpenTag(s)
		if err != nil {
			return
		}
		again, err := ParseOpenTag(OpenTag(tc))
		if err != nil {
			t.Fatalf("OpenTag(%+v) does not parse: %v", tc, err)
		}
		if !reflect.DeepEqual(Normalize(again), Normalize(tc)) {
			t.Fatalf("round trip: %+v != %+v", again, tc)
		}
	})
}

func TestElementAndRoot(t *testing.T) {
	d := mustDocument(t, "")
	d.AppendText("intro ")
	p := ToolCall{ID: "p", Type: "subagent", Status: StatusRunning}
	c := ToolCall{ID: "c", Type: "search_documents", Status: StatusPending, ParentID: "p"}
	if _, err := d.Start(p); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Start(c); err != nil {
		t.Fatal(err)
	}
	d.AppendText(" outro")
	el, ok := d.Element("p")
	want := OpenTag(p) + OpenTag(c) + "</ToolCall></ToolCall>"
	if !ok || el != want || !strings.Contains(d.String(), el) {
		t.Errorf("Element(p) = %q, want %q", el, want)
	}
	if root, ok := d.Root("c"); !ok || root != "p" {
		t.Errorf("Root(c) = %q", root)
	}
	if _, ok := d.Element("nope"); ok {
		t.Error("Element of an unknown id")
	}
}
