package toolcallmarkup

import (
	"errors"
	"testing"
)

// mustDocument returns a Document holding content or stops the test.
func mustDocument(tb testing.TB, content string) *Document {
	tb.Helper()
	d, err := NewDocument(content)
	if err != nil {
		tb.Fatalf("NewDocument(%q): %v", content, err)
	}
	return d
}

// mustStart starts tc in d or stops the test.
func mustStart(tb testing.TB, d *Document, tc ToolCall) string {
	tb.Helper()
	open, err := d.Start(tc)
	if err != nil {
		tb.Fatalf("Start(%+v): %v", tc, err)
	}
	return open
}

// mustUpdate updates id in d or stops the test.
func mustUpdate(tb testing.TB, d *Document, id string, u Update) string {
	tb.Helper()
	open, err := d.Update(id, u)
	if err != nil {
		tb.Fatalf("Update(%q, %+v): %v", id, u, err)
	}
	return open
}

// mustRewrite rewrites id in content or stops the test.
func mustRewrite(tb testing.TB, content, id string, u Update) string {
	tb.Helper()
	out, err := Rewrite(content, id, u)
	if err != nil {
		tb.Fatalf("Rewrite(%q, %q, %+v): %v", content, id, u, err)
	}
	return out
}

// errKinds maps the error kind names of the conformance vectors to errors.
var errKinds = map[string]error{
	"not_found":  ErrNotFound,
	"final":      ErrFinal,
	"transition": ErrTransition,
	"duplicate":  ErrDuplicate,
	"invalid":    ErrInvalid,
}

// errKind returns the kind name of err ("" for nil, "other" if unknown).
func errKind(err error) string {
	if err == nil {
		return ""
	}
	for name, target := range errKinds {
		if errors.Is(err, target) {
			return name
		}
	}
	return "other"
}

// running is a small valid tool call used across tests.
func running(id string, attrs ...Attr) ToolCall {
	return ToolCall{ID: id, Type: "search_documents", Status: StatusRunning, Attrs: attrs}
}
