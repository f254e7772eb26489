package toolcallmarkup

import "errors"

// Status is the state of a tool call as its tag shows it.
type Status string

// The statuses of a tool call. Success, error and cancelled are final.
const (
	StatusPending   Status = "pending"
	StatusRunning   Status = "running"
	StatusSuccess   Status = "success"
	StatusError     Status = "error"
	StatusCancelled Status = "cancelled"
)

// Final reports whether s is one of the final statuses.
func (s Status) Final() bool {
	return s == StatusSuccess || s == StatusError || s == StatusCancelled
}

// Valid reports whether s is one of the five statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusPending, StatusRunning, StatusSuccess, StatusError, StatusCancelled:
		return true
	}
	return false
}

// stage orders statuses: a tag may only move to an equal or later stage,
// and never leaves the final stage.
func (s Status) stage() int {
	switch s {
	case StatusPending:
		return 0
	case StatusRunning:
		return 1
	}
	return 2
}

// Errors returned by this package. Test for them with errors.Is.
var (
	// ErrNotFound means no genuine tag has the requested toolCallId.
	ErrNotFound = errors.New("toolcallmarkup: tool call not found")
	// ErrFinal means the tag already has a final status and cannot change.
	ErrFinal = errors.New("toolcallmarkup: tool call already has a final status")
	// ErrTransition means the update would move a status backwards.
	ErrTransition = errors.New("toolcallmarkup: status cannot move backwards")
	// ErrDuplicate means a tag with the same toolCallId already exists.
	ErrDuplicate = errors.New("toolcallmarkup: duplicate toolCallId")
	// ErrInvalid means a tool call, an update or stored content is malformed.
	ErrInvalid = errors.New("toolcallmarkup: invalid")
)
