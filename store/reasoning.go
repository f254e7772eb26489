package store

import (
	"encoding/json"
	"fmt"

	"github.com/toolmark/toolmark"
)

// storedReasoning is the JSON of a message's reasoning column: what people
// see (text, duration) and, unlike toolmark.Reasoning's JSON, the
// provider's items, which never leave the server.
type storedReasoning struct {
	Text       string                   `json:"text"`
	DurationMs int64                    `json:"durationMs"`
	Parts      []toolmark.ReasoningPart `json:"parts,omitempty"`
}

// reasoningJSON returns the column's value for r: "" (no change) for nil.
func reasoningJSON(r *toolmark.Reasoning) (string, error) {
	if r.Empty() {
		return "", nil
	}
	b, err := json.Marshal(storedReasoning{Text: r.Text, DurationMs: r.DurationMs, Parts: r.Parts})
	if err != nil {
		return "", fmt.Errorf("encoding reasoning: %w", err)
	}
	return string(b), nil
}

// parseReasoning reads the column: nil for null.
func parseReasoning(b []byte) (*toolmark.Reasoning, error) {
	if len(b) == 0 || string(b) == "null" {
		return nil, nil
	}
	var s storedReasoning
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("decoding reasoning: %w", err)
	}
	return &toolmark.Reasoning{Text: s.Text, DurationMs: s.DurationMs, Parts: s.Parts}, nil
}
