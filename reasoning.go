package toolmark

// Kinds of ReasoningPart, one per way a provider hands its reasoning back.
const (
	// ReasoningContent is thinking text streamed as reasoning_content
	// (DeepSeek, vLLM, and other OpenAI-compatible servers): DeepSeek wants
	// it back on the assistant message of a tool-calling turn.
	ReasoningContent = "reasoning_content"
	// ReasoningField is thinking text streamed as reasoning (OpenRouter and
	// servers following it), sent back in the same field.
	ReasoningField = "reasoning"
	// ReasoningThinkingPart is a thinking part of a message's content array
	// (Mistral's Magistral): shown, never required back.
	ReasoningThinkingPart = "thinking_part"
	// ReasoningThinking is an Anthropic thinking block: Text and its
	// Signature, sent back unchanged before the tool_use blocks.
	ReasoningThinking = "thinking"
	// ReasoningRedacted is an Anthropic redacted_thinking block: Data is
	// its encrypted content, sent back unchanged.
	ReasoningRedacted = "redacted_thinking"
	// ReasoningCallSignature is a Gemini thought signature
	// (extra_content.google.thought_signature) of tool call CallID, sent
	// back on that call.
	ReasoningCallSignature = "call_signature"
)

// ReasoningPart is one item of a model's reasoning as its provider gave
// it, kept so that the model gets it back exactly as its API requires, in
// later rounds of the turn and in later turns. Text is displayable
// thinking (untrusted plain text, never markup); Signature and Data are
// opaque provider data, for the server only.
type ReasoningPart struct {
	Kind      string `json:"kind"`
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
	// CallID is, for a call signature, the tool call it belongs to (the
	// model's id within a turn, the tool-call record's id once stored).
	CallID string `json:"callId,omitempty"`
	// Round is the model call (1-based) that produced the part.
	Round int `json:"round,omitempty"`
}

// Reasoning is the thinking of an assistant message: what a person sees
// folded above the answer ("Thought for 12 s") and, kept on the server,
// the provider's items to send back.
type Reasoning struct {
	Text       string `json:"text"`       // the displayable thinking of every round, untrusted plain text
	DurationMs int64  `json:"durationMs"` // how long the model thought, all rounds together
	// Summary is the fold's line, written by the server for every client
	// ("Thought for 12 s", see statustext.Thought); set by the HTTP API.
	Summary string `json:"summary,omitempty"`
	// Parts are the provider's reasoning items, in order: stored with the
	// message and never sent to clients.
	Parts []ReasoningPart `json:"-"`
}

// Empty reports whether r holds no reasoning at all.
func (r *Reasoning) Empty() bool {
	return r == nil || r.Text == "" && len(r.Parts) == 0 && r.DurationMs == 0
}
