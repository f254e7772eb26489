package store

import "github.com/jackc/pgx/v5/pgtype"

// texts is a []string sent as a PostgreSQL text[] (the columns of a group
// commit) without an allocation an element. pgx's own wrapper of a
// []string (pgtype.FlatArray) hands each element to the element's encoder
// as an interface, which copies the string's header to the heap: one
// allocation a row and column of every commit. texts hands over a textAt,
// a pointer-shaped value that an interface holds as it is. A nil texts is
// NULL, as a nil []string is.
type texts []string

// Dimensions implements pgtype.ArrayGetter.
func (a texts) Dimensions() []pgtype.ArrayDimension {
	if a == nil {
		return nil
	}
	return []pgtype.ArrayDimension{{Length: int32(len(a)), LowerBound: 1}}
}

// Index implements pgtype.ArrayGetter.
func (a texts) Index(i int) any { return textAt{&a[i]} }

// IndexType implements pgtype.ArrayGetter.
func (a texts) IndexType() any { return textAt{} }

// textAt is an element of a texts, encoded as text (pgtype.TextValuer).
type textAt struct{ s *string }

// TextValue implements pgtype.TextValuer.
func (t textAt) TextValue() (pgtype.Text, error) {
	return pgtype.Text{String: *t.s, Valid: true}, nil
}
