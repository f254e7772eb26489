package pgtest

import (
	"context"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

// Statements counts the statements a store sends (store.WithTracer):
// N is the count so far.
type Statements struct{ N atomic.Int64 }

// TraceQueryStart counts a statement.
func (s *Statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	s.N.Add(1)
	return ctx
}

// TraceQueryEnd does nothing.
func (s *Statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
