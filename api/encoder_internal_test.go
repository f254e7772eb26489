package api

import (
	"testing"

	"github.com/toolmark/toolmark"
)

// TestAISDKPartsMapEveryEventType fails for an event type the AI SDK
// encoder has no word for: a new type must be mapped (or mapped to nothing).
func TestAISDKPartsMapEveryEventType(t *testing.T) {
	for _, et := range toolmark.EventTypes() {
		if aiSDKParts[et] == nil {
			t.Errorf("the AI SDK encoder does not map event type %q", et)
		}
	}
}

// TestAGUIEventsMapEveryEventType fails for an event type the AG-UI
// encoder has no word for.
func TestAGUIEventsMapEveryEventType(t *testing.T) {
	for _, et := range toolmark.EventTypes() {
		if aguiEvents[et] == nil {
			t.Errorf("the AG-UI encoder does not map event type %q", et)
		}
	}
}
