package store

import (
	"fmt"

	"github.com/toolmark/toolmark"
)

// The events table stores an event's type as its number (a smallint, see
// sql/009), taken from the one table of event types in the root package
// (toolmark.EventType.Code).

// eventTypeCode returns the number the events table stores for t.
func eventTypeCode(t toolmark.EventType) (int16, error) {
	code, ok := t.Code()
	if !ok {
		return 0, fmt.Errorf("storing an event: unknown event type %q", t)
	}
	return code, nil
}

// eventTypeOf returns the event type the events table stores as code.
func eventTypeOf(code int16) (toolmark.EventType, error) {
	t, ok := toolmark.EventTypeOfCode(code)
	if !ok {
		return "", fmt.Errorf("reading events: unknown event type number %d (written by a newer toolmark?)", code)
	}
	return t, nil
}
