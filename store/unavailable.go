package store

import (
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/toolmark/toolmark"
)

// ErrUnavailable is the client's view of an error for which Unavailable
// reports true: the request may succeed once the database is back.
var ErrUnavailable = toolmark.Errorf(toolmark.EUNAVAILABLE, "the database is unavailable; try again shortly")

// Unavailable reports whether err means that PostgreSQL could not be
// reached or is not taking work, rather than that the request was wrong: a
// failed connection attempt, a connection that broke or was closed, a
// network error or timeout, or a server that is starting up, shutting down
// or recovering (SQLSTATE class 08, 57P01, 57P02, 57P03). It is the one
// place that tells an outage from a failure; callers map it to
// EUNAVAILABLE (HTTP 503) or retry.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03": // admin_shutdown, crash_shutdown, cannot_connect_now
			return true
		}
		if len(pgErr.Code) == 5 && pgErr.Code[:2] == "08" { // connection_exception
			return true
		}
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &connectErr), errors.As(err, &netErr):
		return true
	case errors.Is(err, pgconn.ErrConnClosed), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return true
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	return false
}
