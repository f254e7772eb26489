package store

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

// TestTextsEncodeAsStrings checks that texts encodes as pgx encodes a
// []string, in both formats, NULL for nil, and that its allocations do
// not grow with its length (one an element is what it is for).
func TestTextsEncodeAsStrings(t *testing.T) {
	m := pgtype.NewMap()
	for _, a := range [][]string{nil, {}, {""}, {"a", "", "é ü 🙂", `x,y "z" \w {}`, "NULL"}} {
		for _, format := range []int16{pgtype.BinaryFormatCode, pgtype.TextFormatCode} {
			want, err := m.Encode(pgtype.TextArrayOID, format, a, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.Encode(pgtype.TextArrayOID, format, texts(a), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
				t.Errorf("%q, format %d: texts encodes as %q, []string as %q", a, format, got, want)
			}
		}
	}
	allocs := func(n int) float64 {
		a := make(texts, n)
		for i := range a {
			a[i] = fmt.Sprint("turn-", i)
		}
		buf := make([]byte, 0, 64<<10)
		return testing.AllocsPerRun(20, func() {
			if _, err := m.Encode(pgtype.TextArrayOID, pgtype.BinaryFormatCode, a, buf[:0]); err != nil {
				t.Fatal(err)
			}
		})
	}
	if few, many := allocs(4), allocs(400); many > few {
		t.Errorf("encoding 400 texts allocates %v times, 4 texts %v: the elements allocate", many, few)
	}
}
