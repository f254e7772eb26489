package store

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// Replay rebuilds an assistant message's content from a snapshot of it and
// the events logged after the snapshot's seq, in seq order. Re-applying an
// event the snapshot already reflects is harmless: a tag that is already
// started, final or further along is left as it is.
func Replay(content string, events []toolmark.Event) (string, error) {
	d, err := toolcallmarkup.NewDocument(content)
	if err != nil {
		return "", fmt.Errorf("replaying events: snapshot: %w", err)
	}
	for _, e := range events {
		if err := ApplyEvent(d, e); err != nil {
			return "", fmt.Errorf("replaying events: %w", err)
		}
	}
	return d.String(), nil
}

// ApplyEvent applies one logged event to d: text_delta appends its text,
// which is already neutralised, as it is; tool_call_started starts the tag
// given by the event's markup; the other tool_call_* events update the tag
// with the same toolCallId. Events that do not change content are ignored,
// and so are updates that a replay has already applied (ErrFinal,
// ErrTransition, ErrDuplicate).
func ApplyEvent(d *toolcallmarkup.Document, e toolmark.Event) error {
	switch e.Type {
	case toolmark.EventTextDelta:
		var data toolmark.TextDeltaData
		if err := json.Unmarshal(e.Data, &data); err != nil {
			return fmt.Errorf("event %d (%s): %w", e.Seq, e.Type, err)
		}
		d.AppendNeutralised(data.Text)
	case toolmark.EventToolCallStarted, toolmark.EventToolCallDelta, toolmark.EventToolCallRunning,
		toolmark.EventToolCallSuccess, toolmark.EventToolCallError:
		tc, err := eventToolCall(e)
		if err != nil {
			return err
		}
		if e.Type == toolmark.EventToolCallStarted {
			_, err = d.Start(tc)
			if errors.Is(err, toolcallmarkup.ErrDuplicate) {
				err = nil
			}
		} else {
			_, err = d.Update(tc.ID, toolcallmarkup.Update{Status: tc.Status, Error: tc.Error, Extra: tc.Attrs})
			if errors.Is(err, toolcallmarkup.ErrFinal) || errors.Is(err, toolcallmarkup.ErrTransition) {
				err = nil
			}
		}
		if err != nil {
			return fmt.Errorf("event %d (%s): %w", e.Seq, e.Type, err)
		}
	}
	return nil
}

// eventToolCall returns the tool call described by a tool_call_* event's
// markup.
func eventToolCall(e toolmark.Event) (toolcallmarkup.ToolCall, error) {
	var data toolmark.ToolCallData
	if err := json.Unmarshal(e.Data, &data); err != nil {
		return toolcallmarkup.ToolCall{}, fmt.Errorf("event %d (%s): %w", e.Seq, e.Type, err)
	}
	tcs := toolcallmarkup.Parse(data.Markup + "</ToolCall>")
	if len(tcs) != 1 {
		return toolcallmarkup.ToolCall{}, fmt.Errorf("event %d (%s): markup is not one ToolCall tag", e.Seq, e.Type)
	}
	tc := tcs[0]
	if data.ParentID != "" {
		tc.ParentID = data.ParentID
	}
	return tc, nil
}
