package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/toolmark/toolmark"
)

// TestEveryEventTypeHasANumber reads the EventType constants declared in
// the toolmark package and checks each has a number to be stored under
// (an event of a type without one could not be committed), that no two
// share one, and that each number reads back as its type.
func TestEveryEventTypeHasANumber(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "../events.go", nil, 0)
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
	seen := map[int16]toolmark.EventType{}
	for _, typ := range declared {
		code, err := eventTypeCode(typ)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if other, dup := seen[code]; dup {
			t.Errorf("%s and %s share the number %d", typ, other, code)
		}
		seen[code] = typ
		if back, err := eventTypeOf(code); err != nil || back != typ {
			t.Errorf("number %d reads back as %q (%v), want %q", code, back, err, typ)
		}
	}
	if len(eventTypeCodes) != len(declared) {
		t.Errorf("%d numbered event types, %d declared", len(eventTypeCodes), len(declared))
	}
	for _, code := range []int16{0, -1, int16(len(eventTypes)), 999} {
		if _, err := eventTypeOf(code); err == nil {
			t.Errorf("eventTypeOf(%d) gave no error", code)
		}
	}
	if _, err := eventTypeCode("no_such_type"); err == nil {
		t.Error("eventTypeCode of an unknown type gave no error")
	}
}
