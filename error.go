package toolmark

import (
	"errors"
	"fmt"
)

// Error codes. The api package maps each to one HTTP status in one place.
const (
	ECONFLICT     = "conflict"
	EINTERNAL     = "internal"
	EINVALID      = "invalid"
	ENOTFOUND     = "not_found"
	EUNAUTHORIZED = "unauthorized"
	ETOOLARGE     = "too_large"
	EUNAVAILABLE  = "unavailable"
)

// Error is an error with a code and a message safe to show to a client.
type Error struct {
	Code    string
	Message string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("toolmark error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// for any other non-nil error and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message of the first *Error in err's chain, or
// "internal error" for any other error, so internals never reach a client.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// EUNSUPPORTED is the code of a request body in a media type the server
// does not take.
const EUNSUPPORTED = "unsupported_media_type"

// ErrCursorPruned is the error of reading a turn's events after a cursor
// when the events after it were pruned from the log: the reader sends a
// snapshot instead. It is an ECONFLICT *Error; test for it with errors.Is.
var ErrCursorPruned = &Error{Code: ECONFLICT, Message: "events after the cursor are no longer in the log"}
