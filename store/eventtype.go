package store

import (
	"fmt"

	"github.com/toolmark/toolmark"
)

// eventTypes numbers the event types as the events table stores them (its
// type column is a smallint, see sql/009): the number is an event type's
// index here. The numbers are stored, so an entry never moves and is never
// removed; a new event type takes the next one.
var eventTypes = [...]toolmark.EventType{
	1:  toolmark.EventTurnQueued,
	2:  toolmark.EventTurnStarted,
	3:  toolmark.EventRoundStarted,
	4:  toolmark.EventTextDelta,
	5:  toolmark.EventToolCallStarted,
	6:  toolmark.EventToolCallDelta,
	7:  toolmark.EventToolCallRunning,
	8:  toolmark.EventToolCallSuccess,
	9:  toolmark.EventToolCallError,
	10: toolmark.EventTodoUpdate,
	11: toolmark.EventSubagentStatus,
	12: toolmark.EventSnapshot,
	13: toolmark.EventModelRetry,
	14: toolmark.EventUsage,
	15: toolmark.EventTurnCompleted,
	16: toolmark.EventTurnFailed,
	17: toolmark.EventTurnCancelled,
	19: toolmark.EventToolProgress,
}

var eventTypeCodes = func() map[toolmark.EventType]int16 {
	m := make(map[toolmark.EventType]int16, len(eventTypes))
	for code, t := range eventTypes {
		if t != "" {
			m[t] = int16(code)
		}
	}
	return m
}()

// eventTypeCode returns the number the events table stores for t.
func eventTypeCode(t toolmark.EventType) (int16, error) {
	code, ok := eventTypeCodes[t]
	if !ok {
		return 0, fmt.Errorf("storing an event: unknown event type %q", t)
	}
	return code, nil
}

// eventTypeOf returns the event type the events table stores as code.
func eventTypeOf(code int16) (toolmark.EventType, error) {
	if code <= 0 || int(code) >= len(eventTypes) || eventTypes[code] == "" {
		return "", fmt.Errorf("reading events: unknown event type number %d (written by a newer toolmark?)", code)
	}
	return eventTypes[code], nil
}
