package turnstate

import (
	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/statustext"
)

// Bubble returns the status bubble of a turn: the line a client shows
// above (or below) the streaming answer, "" for none. It is Queued while
// the turn waits behind others for a slot (Thinking when a slot was free
// and the turn is about to start); the message of a model retry while it
// waits on one; else Thinking until the answer's first text (nothing
// while the model's own thinking streams: its fold shows it), then the status of the tool call touched
// last (one that is not final first; a sub-agent's phase message when that
// is its newest event), cleared by the next text. The server sends it to
// the page; the terminal client computes it from the same state.
func (s *State) Bubble() string {
	switch s.status {
	case toolmark.TurnQueued:
		switch {
		case !s.queued: // nothing applied yet
			return ""
		case s.queue > 0:
			return statustext.Queued
		}
		return statustext.Thinking
	case toolmark.TurnRunning:
	default:
		return ""
	}
	if r := s.Retrying(); r != "" {
		return r
	}
	touched, texted := s.Touched()
	for i := len(touched) - 1; i >= 0; i-- {
		if c, ok := s.Call(touched[i].ID); ok && !c.Status.Final() {
			return callLine(c, touched[i].Phase)
		}
	}
	if n := len(touched); n > 0 {
		if c, ok := s.Call(touched[n-1].ID); ok {
			return callLine(c, false)
		}
	}
	if texted || s.reasoning.thinking {
		return "" // (the model's thinking shows in its fold)
	}
	return statustext.Thinking
}

// callLine is the status line of c: the sub-agent's phase message when it
// is the newest, else the status text the server wrote into its last
// event (or, for events written without one, the text of its tag).
func callLine(c Call, phase bool) string {
	if phase && c.Phase != "" {
		return c.Phase
	}
	return statustext.Line(c.StatusText, c.Markup)
}
