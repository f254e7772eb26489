package turnstate

import "github.com/toolmark/toolmark"

// reasoningState is the thinking of the turn's answer: what reasoning_delta
// events brought (see toolmark.ReasoningDeltaData).
type reasoningState struct {
	r        toolmark.Reasoning
	thinking bool // a round's thinking streams and has not ended
	round    int  // the round whose text came last
}

func (s *State) applyReasoning(d toolmark.ReasoningDeltaData) {
	rs := &s.reasoning
	if d.Text != "" {
		if rs.r.Text != "" && d.Round != rs.round {
			rs.r.Text += "\n\n" // each round's thinking a paragraph of its own
		}
		rs.r.Text, rs.round = rs.r.Text+d.Text, d.Round
	}
	if !d.Done {
		rs.thinking = rs.thinking || d.Text != ""
		return
	}
	rs.thinking = false
	rs.r.DurationMs += d.DurationMs
	rs.r.Parts = append(rs.r.Parts, d.Parts...)
	s.milestone = true // worth saving with the content
}

// Reasoning returns the thinking of the answer so far — its displayable
// text, how long the model thought, the provider's items — or nil when the
// model did not think.
func (s *State) Reasoning() *toolmark.Reasoning {
	if s.reasoning.r.Empty() {
		return nil
	}
	r := s.reasoning.r
	r.Parts = append([]toolmark.ReasoningPart(nil), r.Parts...)
	return &r
}

// Thinking reports whether the model is thinking now: a round's thinking
// streams and has not ended.
func (s *State) Thinking() bool { return s.reasoning.thinking }
