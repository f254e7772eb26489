package client

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolmark/toolmark"
)

// Event is one event of a turn with its payload decoded.
//
// Data holds the payload as the struct of its event type, by value:
// toolmark.TurnQueuedData, TurnStartedData, RoundStartedData,
// TextDeltaData, ToolCallData (every tool_call_* event), TodoUpdateData,
// SubagentStatusData, SnapshotData or TurnEndData (turn_completed,
// turn_failed, turn_cancelled). An event type this client does not know
// has a nil Data; Wire still holds it as the server sent it.
type Event struct {
	Seq       int64
	TurnID    string
	MessageID string
	Type      toolmark.EventType
	Time      time.Time
	Data      any

	wire toolmark.Event
}

// Wire returns the event as the server sent it, its payload undecoded.
func (e Event) Wire() toolmark.Event { return e.wire }

// MarshalJSON writes the event as the server sent it: {"seq":…,
// "turnId":…, "messageId":…, "type":…, "time":…, "data":{…}}.
func (e Event) MarshalJSON() ([]byte, error) { return json.Marshal(e.wire) }

// DecodeEvent decodes the payload of an event as the server sent it.
func DecodeEvent(w toolmark.Event) (Event, error) {
	e := Event{Seq: w.Seq, TurnID: w.TurnID, MessageID: w.MessageID, Type: w.Type, Time: w.Time, wire: w}
	d, err := toolmark.DecodeData(w.Type, w.Data)
	if err != nil {
		return e, fmt.Errorf("event %d: %w", w.Seq, err)
	}
	if end, ok := d.(toolmark.TurnEndData); ok && end.Status == "" {
		end.Status = w.Type.EndStatus()
		d = end
	}
	e.Data = d
	return e, nil
}
