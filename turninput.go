package toolmark

// TurnInput is what a person sends to start a turn: its text, the model to answer it and the files attached to it.
type TurnInput struct {
	Content     string   `json:"content"`
	Model       string   `json:"model,omitempty"`       // an id of GET /api/models; "" means the conversation's last model, else the default
	Attachments []string `json:"attachments,omitempty"` // upload ids (carried through untouched here)
}
