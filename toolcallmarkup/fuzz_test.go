package toolcallmarkup

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// vectorTexts returns the contents and texts of the conformance vectors and
// the hostile texts, to seed the fuzz corpora.
func vectorTexts(tb testing.TB) (contents, texts []string) {
	tb.Helper()
	for _, f := range loadVectors(tb) {
		for _, v := range f.Vectors {
			contents = append(contents, decodeText(tb, v.Initial, v.InitialHex), v.Expected)
			for _, op := range v.Operations {
				if op.Op == "append" {
					texts = append(texts, decodeText(tb, op.Text, op.TextHex))
				}
			}
		}
	}
	texts = append(texts, hostile...)
	contents = append(contents, hostile...)
	return contents, texts
}

// FuzzParse checks, for any content:
//   - Parse and Scan do not panic;
//   - Scan's spans lie within the content, in document order, each opening
//     tag starts with "<ToolCall" and ends with ">", each closed element ends
//     with "</ToolCall>", and a nested span lies inside its parent's body;
//   - OneLineTags puts every opening tag on one line, without a raw tab,
//     changes nothing outside the opening tags, and Parse reads the same
//     calls from its result;
//   - for each call that Validate accepts, Parse(Markup(call)) returns
//     exactly Normalize(call);
//   - Rewrite finds every id Parse returns;
//   - NewDocument(content).String() is content when NewDocument accepts it,
//     and after appending text and a call the Document's calls are what
//     Parse reads from its content.
func FuzzParse(f *testing.F) {
	contents, _ := vectorTexts(f)
	for _, c := range contents {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, content string) {
		spans := Scan(content)
		calls := Parse(content)
		if len(calls) != len(spans) {
			t.Fatalf("Parse got %d calls, Scan %d spans", len(calls), len(spans))
		}
		prev := -1
		for i, s := range spans {
			if !(0 <= s.Start && s.Start < s.OpenEnd && s.OpenEnd <= s.CloseStart && s.CloseStart <= s.End && s.End <= len(content)) {
				t.Fatalf("span %d out of bounds: %+v (len %d)", i, s, len(content))
			}
			if s.Start <= prev {
				t.Fatalf("span %d starts at %d, not after %d", i, s.Start, prev)
			}
			prev = s.Start
			open := content[s.Start:s.OpenEnd]
			if !strings.HasPrefix(open, "<ToolCall") || !strings.HasSuffix(open, ">") {
				t.Fatalf("span %d opening tag %q", i, open)
			}
			if s.End > s.CloseStart && content[s.CloseStart:s.End] != closeTag {
				t.Fatalf("span %d closing tag %q", i, content[s.CloseStart:s.End])
			}
			if s.Parent >= i || s.Parent < -1 {
				t.Fatalf("span %d parent %d", i, s.Parent)
			}
			if s.Parent >= 0 {
				p := spans[s.Parent]
				if s.Start < p.OpenEnd || s.End > p.CloseStart {
					t.Fatalf("span %d %+v not inside parent %+v", i, s, p)
				}
			}
			if !reflect.DeepEqual(s.Call, calls[i]) {
				t.Fatalf("span %d call %#v, Parse %#v", i, s.Call, calls[i])
			}
		}
		one := OneLineTags(content)
		if got := Parse(one); !reflect.DeepEqual(got, calls) {
			t.Fatalf("Parse(OneLineTags(content)) got %#v, want %#v", got, calls)
		}
		oneSpans := Scan(one)
		var outside, outsideOne strings.Builder
		for i, s := range oneSpans {
			if open := one[s.Start:s.OpenEnd]; strings.ContainsAny(open, "\t\n\r") {
				t.Fatalf("OneLineTags left opening tag %q", open)
			}
			from, fromOne := 0, 0
			if i > 0 {
				from, fromOne = spans[i-1].OpenEnd, oneSpans[i-1].OpenEnd
			}
			outside.WriteString(content[from:spans[i].Start])
			outsideOne.WriteString(one[fromOne:s.Start])
		}
		if len(spans) > 0 {
			outside.WriteString(content[spans[len(spans)-1].OpenEnd:])
			outsideOne.WriteString(one[oneSpans[len(oneSpans)-1].OpenEnd:])
		} else {
			outside.WriteString(content)
			outsideOne.WriteString(one)
		}
		if outside.String() != outsideOne.String() {
			t.Fatalf("OneLineTags changed text outside the opening tags:\n got %q\nfrom %q", one, content)
		}
		for _, tc := range calls {
			if Validate(tc) == nil {
				got := Parse(Markup(tc))
				want := []ToolCall{Normalize(tc)}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("Parse(Markup(%#v)) got %#v, want %#v", tc, got, want)
				}
			}
			if _, err := Rewrite(content, tc.ID, Update{}); errors.Is(err, ErrNotFound) {
				t.Fatalf("Rewrite of %q (returned by Parse) got %v", tc.ID, err)
			}
		}
		d, err := NewDocument(content)
		if err != nil {
			if utf8.ValidString(content) && strings.IndexByte(content, 0) < 0 && !errors.Is(err, ErrDuplicate) {
				t.Fatalf("NewDocument got %v", err)
			}
			return
		}
		if d.String() != content || d.Len() != len(content) {
			t.Fatalf("NewDocument(content).String() got %q (Len %d), want %q", d.String(), d.Len(), content)
		}
		if got := d.Calls(); !reflect.DeepEqual(got, calls) && len(got)+len(calls) > 0 {
			t.Fatalf("Calls got %#v, want %#v", got, calls)
		}
		// What a Document appends to loaded content lands where its calls
		// say, whatever the content ends with.
		d.AppendText("x")
		if _, ok := d.Get("fuzz-new"); !ok {
			mustStart(t, d, running("fuzz-new"))
		}
		d.AppendText("y")
		d.Flush()
		if got, want := d.Calls(), Parse(d.String()); !reflect.DeepEqual(got, want) {
			t.Fatalf("after appending Calls got %#v, Parse %#v", got, want)
		}
		if d.Len() != len(d.String()) {
			t.Fatalf("Len got %d, want %d", d.Len(), len(d.String()))
		}
	})
}

// statusOf picks one of the five statuses, or "" (keep), from a byte.
func statusOf(b uint8) Status {
	return [...]Status{StatusPending, StatusRunning, StatusSuccess, StatusError, StatusCancelled, ""}[int(b)%6]
}

// FuzzRewrite checks, for any content and update:
//   - Rewrite does not panic;
//   - it changes nothing but the opening tag of the first element whose id
//     is the requested one (when ids are unique), and on error returns the
//     input;
//   - a missing id returns ErrNotFound and the input;
//   - on content a Document built around untrusted text, an update with the
//     tag's current non-final status returns the input unchanged, and
//     Rewrite and Document.Update agree.
func FuzzRewrite(f *testing.F) {
	contents, texts := vectorTexts(f)
	for i, c := range contents {
		tx := texts[i%len(texts)]
		f.Add(c, tx, texts[(i+1)%len(texts)], "call_1", "search_documents", tx, "query", tx, uint8(i), uint8(i/6))
	}
	f.Add("", "", "", `a"b&c'<>调用`, "t", "$& $' $1", "count", "3", uint8(1), uint8(2))
	f.Fuzz(func(t *testing.T, content, text1, text2, id, typ, errText, key, value string, st1, st2 uint8) {
		u := Update{Status: statusOf(st2), Error: errText, Extra: []Attr{{key, value}}}

		// Any content.
		out, err := Rewrite(content, id, u)
		var target *Span
		ids := make(map[string]bool)
		unique := true
		for _, s := range Scan(content) {
			raw, _, _ := parseOpen(content, s.Start)
			if ids[raw.ID] {
				unique = false
			}
			ids[raw.ID] = true
			if raw.ID == id && target == nil {
				target = &s
			}
		}
		switch {
		case err != nil && out != content:
			t.Fatalf("Rewrite got error %v and changed the content", err)
		case target == nil:
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("Rewrite of a missing id got %v, want ErrNotFound", err)
			}
		case errors.Is(err, ErrNotFound):
			t.Fatalf("Rewrite of %q got ErrNotFound, but Scan finds it", id)
		case err == nil && unique:
			rest := content[target.OpenEnd:]
			if !strings.HasPrefix(out, content[:target.Start]) || !strings.HasSuffix(out, rest) {
				t.Fatalf("Rewrite changed bytes outside the opening tag:\n got %q\nfrom %q", out, content)
			}
			open := out[target.Start : len(out)-len(rest)]
			if !HasTagPrefix(open) || strings.Count(open, "<") != 1 || strings.Count(open, ">") != 1 {
				t.Fatalf("new opening tag %q", open)
			}
		}

		// Content built by a Document around untrusted text.
		tc := ToolCall{ID: id, Type: typ, Status: statusOf(st1 % 2), Error: errText, Attrs: []Attr{{key, value}}}
		d := mustDocument(t, "")
		d.AppendText(text1)
		_, startErr := d.Start(tc)
		d.AppendText(text2)
		d.Flush()
		content = d.String()
		if startErr != nil {
			if out, err := Rewrite(content, id, u); !errors.Is(err, ErrNotFound) || out != content {
				t.Fatalf("Rewrite with no genuine tag got %v", err)
			}
			return
		}
		cur, _ := d.Get(id)
		if out, err := Rewrite(content, id, Update{Status: cur.Status}); err != nil || out != content {
			t.Fatalf("identity Rewrite got %v, changed=%v", err, out != content)
		}
		if out, err := Rewrite(content, id+"x", u); !errors.Is(err, ErrNotFound) || out != content {
			t.Fatalf("Rewrite of a missing id got %v", err)
		}
		out, err = Rewrite(content, id, u)
		_, derr := d.Update(id, u)
		if errKind(err) != errKind(derr) {
			t.Fatalf("Rewrite got %v, Document.Update got %v", err, derr)
		}
		if out != d.String() {
			t.Fatalf("Rewrite got %q, Document.Update %q", out, d.String())
		}
		if calls := Parse(out); len(calls) != 1 || calls[0].ID != id {
			t.Fatalf("Parse got %#v, want the one genuine tag", calls)
		}
	})
}

// FuzzAppendText checks, for any untrusted text:
//   - AppendText and Flush do not panic;
//   - the text never yields a tag: Parse of the content is empty;
//   - the content is valid UTF-8 without NUL, and NewDocument gives it back;
//   - appending in one piece, byte by byte, or in two chunks split anywhere
//     yields the same content, and what AppendText and Flush return adds up
//     to it;
//   - RestoreText(Neutralise(a)) is a, outside the documented exceptions;
//   - with a genuine tag started between two texts, Parse returns exactly
//     that tag, and Update and Rewrite on it agree.
func FuzzAppendText(f *testing.F) {
	_, texts := vectorTexts(f)
	for i, tx := range texts {
		f.Add(tx, texts[(i+1)%len(texts)], uint16(i*7))
	}
	f.Fuzz(func(t *testing.T, a, b string, split uint16) {
		one := mustDocument(t, "")
		ret := one.AppendText(a) + one.Flush()
		content := one.String()
		if ret != content || one.Len() != len(content) {
			t.Fatalf("returned %q, content %q (Len %d)", ret, content, one.Len())
		}
		if calls := Parse(content); len(calls) != 0 {
			t.Fatalf("text %q yields tags %#v", a, calls)
		}
		if strings.Contains(content, "<ToolCall") || strings.Contains(content, "</ToolCall") {
			t.Fatalf("content holds a raw tag name: %q", content)
		}
		if !utf8.ValidString(content) || strings.IndexByte(content, 0) >= 0 {
			t.Fatalf("content is not valid UTF-8 without NUL: %q", content)
		}
		if content != Neutralise(a) {
			t.Fatalf("content %q, Neutralise %q", content, Neutralise(a))
		}
		if r := mustDocument(t, content); r.String() != content {
			t.Fatalf("NewDocument got %q, want %q", r.String(), content)
		}

		bytewise := mustDocument(t, "")
		var sb strings.Builder
		for i := 0; i < len(a); i++ {
			sb.WriteString(bytewise.AppendText(a[i : i+1]))
		}
		sb.WriteString(bytewise.Flush())
		if bytewise.String() != content || sb.String() != content {
			t.Fatalf("byte by byte got %q (returned %q), want %q", bytewise.String(), sb.String(), content)
		}

		k := 0
		if len(a) > 0 {
			k = int(split) % (len(a) + 1)
		}
		two := mustDocument(t, "")
		ret = two.AppendText(a[:k]) + two.AppendText(a[k:]) + two.Flush()
		if two.String() != content || ret != content {
			t.Fatalf("split at %d got %q (returned %q), want %q", k, two.String(), ret, content)
		}

		if utf8.ValidString(a) && strings.IndexByte(a, 0) < 0 && !endsInPartialName(a) {
			if got := RestoreText(content); got != a {
				t.Fatalf("RestoreText(Neutralise(%q)) got %q", a, got)
			}
		}

		d := mustDocument(t, "")
		d.AppendText(a)
		mustStart(t, d, running("call_1", Attr{"query", b}))
		d.AppendText(b)
		d.Flush()
		calls := Parse(d.String())
		if len(calls) != 1 || calls[0].ID != "call_1" || calls[0].Status != StatusRunning {
			t.Fatalf("Parse got %#v, want call_1 only", calls)
		}
		before := d.String()
		u := Update{Status: StatusError, Error: a + b, Extra: []Attr{{"count", b}}}
		want := mustRewrite(t, before, "call_1", u)
		mustUpdate(t, d, "call_1", u)
		if d.String() != want {
			t.Fatalf("Update got %q, Rewrite %q", d.String(), want)
		}
		if calls := Parse(d.String()); len(calls) != 1 || calls[0].Status != StatusError {
			t.Fatalf("after update Parse got %#v", calls)
		}
	})
}
