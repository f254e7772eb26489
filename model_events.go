package toolmark

// ModelRetryData is the payload of model_retry: a model call failed in a
// way that waiting may cure (rate limited, overloaded, unreachable, timed
// out) before it streamed anything, and the agent tries again after
// WaitMs. Message is the line to show meanwhile ("Rate limited — retrying
// in 3 s"), written by the server.
type ModelRetryData struct {
	ToolCallID  string `json:"toolCallId,omitempty"` // the sub-agent call whose model waits; "" for the answer's own
	Round       int    `json:"round"`
	Attempt     int    `json:"attempt"`     // the attempt that failed, 1-based
	MaxAttempts int    `json:"maxAttempts"` // the attempts the policy allows
	WaitMs      int64  `json:"waitMs"`
	Code        string `json:"code"` // ERATELIMITED, EOVERLOADED, EUNAVAILABLE or ETIMEOUT
	Message     string `json:"message"`
}

// Usage counts a model's tokens, as its service reports them.
type Usage struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
}

// Add returns u + v.
func (u Usage) Add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens}
}

// UsageData is the payload of usage: the tokens of one model call (a
// round), sent when the call ends, with the turn's total so far.
type UsageData struct {
	ToolCallID string `json:"toolCallId,omitempty"` // the sub-agent call that made it; "" for the answer's own
	Round      int    `json:"round"`
	Usage
	Total Usage `json:"total"` // the turn's tokens so far, sub-agents included
}
