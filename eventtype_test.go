package toolmark_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/toolmark/toolmark"
)

// storedNumbers are the numbers events are stored under: a row of the
// events table keeps its number forever, so none may move.
var storedNumbers = map[toolmark.EventType]int16{
	"turn_queued": 1, "turn_started": 2, "round_started": 3, "text_delta": 4,
	"tool_call_started": 5, "tool_call_delta": 6, "tool_call_running": 7,
	"tool_call_success": 8, "tool_call_error": 9, "todo_update": 10,
	"subagent_status": 11, "snapshot": 12, "model_retry": 13, "usage": 14,
	"turn_completed": 15, "turn_failed": 16, "turn_cancelled": 17,
}

// TestEventTypes reads the EventType constants declared in events.go and
// checks that each is in the table of event types with a number to be
// stored under (an event of a type without one could not be committed), that
// no two share one, that each number reads back as its type, that the
// numbers stored so far never moved, and that each type's data decodes to
// a payload struct.
func TestEventTypes(t *testing.T) {
	declared := declaredEventTypes(t)
	if got := toolmark.EventTypes(); !slices.Equal(sorted(got), sorted(declared)) {
		t.Fatalf("the table holds %v, events.go declares %v", got, declared)
	}
	seen := map[int16]toolmark.EventType{}
	for _, typ := range declared {
		code, ok := typ.Code()
		if !ok || code <= 0 {
			t.Errorf("%s has no number", typ)
			continue
		}
		if other, dup := seen[code]; dup {
			t.Errorf("%s and %s share the number %d", typ, other, code)
		}
		seen[code] = typ
		if back, ok := toolmark.EventTypeOfCode(code); !ok || back != typ {
			t.Errorf("number %d reads back as %q, want %q", code, back, typ)
		}
		if want, stored := storedNumbers[typ]; stored && code != want {
			t.Errorf("%s has the number %d; it is stored as %d", typ, code, want)
		}
		d, err := toolmark.DecodeData(typ, []byte(`{}`))
		if err != nil || d == nil || reflect.TypeOf(d).Kind() != reflect.Struct {
			t.Errorf("DecodeData(%s, {}) = %#v, %v; want a payload struct", typ, d, err)
		}
	}
	for typ := range storedNumbers {
		if _, ok := typ.Code(); !ok {
			t.Errorf("%s, stored in logs, is gone from the table", typ)
		}
	}
	for _, code := range []int16{0, -1, 999} {
		if typ, ok := toolmark.EventTypeOfCode(code); ok {
			t.Errorf("EventTypeOfCode(%d) = %s", code, typ)
		}
	}
	if _, ok := toolmark.EventType("no_such_type").Code(); ok {
		t.Error("an unknown type has a number")
	}
	if d, err := toolmark.DecodeData("no_such_type", []byte(`{"a":1}`)); d != nil || err != nil {
		t.Errorf("an unknown type decodes to %v, %v; want nil, nil", d, err)
	}
}

func declaredEventTypes(t *testing.T) []toolmark.EventType {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "events.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []toolmark.EventType
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || vs.Type == nil {
			return true
		}
		if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "EventType" {
			return true
		}
		for _, v := range vs.Values {
			if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, _ := strconv.Unquote(lit.Value)
				declared = append(declared, toolmark.EventType(s))
			}
		}
		return true
	})
	if len(declared) < 17 {
		t.Fatalf("found %d event types in events.go, want at least 17: %v", len(declared), declared)
	}
	return declared
}

func sorted(ts []toolmark.EventType) []toolmark.EventType {
	out := slices.Clone(ts)
	slices.Sort(out)
	return out
}
