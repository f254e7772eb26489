package liveview

import (
	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/statustext"
)

// Reasoning is the model's thinking in an Update, for the page's fold
// above the answer. Text is plain text (the model's: shown as text, never
// as HTML); when From is not 0 it continues the text the follower holds
// after its first From characters (UTF-16 code units), so thinking that
// grows costs what it grew by. Thinking is true while the model thinks;
// DurationMs is how long it thought, once a round's thinking ended.
type Reasoning struct {
	Text       string `json:"text"`
	From       int    `json:"from,omitempty"`
	Thinking   bool   `json:"thinking,omitempty"`
	DurationMs int64  `json:"durationMs"`
	// Summary is the fold's line: statustext.Thinking while the model
	// thinks, then statustext.Thought of the duration.
	Summary string `json:"summary"`
}

// reasonSent is how much of the thinking a follower holds after an Update.
type reasonSent struct {
	version int64
	n       int // bytes of the text
}

// reasoningUpdate returns the thinking a follower at version since needs,
// or nil when it holds it all.
func (l *View) reasoningUpdate(since, version int64) *Reasoning {
	r := l.state.Reasoning()
	if r == nil || l.reasonAt <= since {
		l.recordReason(version, r)
		return nil
	}
	out := &Reasoning{Text: r.Text, Thinking: l.state.Thinking(), DurationMs: r.DurationMs, Summary: statustext.Thought(r.DurationMs)}
	if out.Thinking {
		out.Summary = statustext.Thinking
	}
	for i := len(l.reasonLog) - 1; i >= 0 && since >= 0; i-- {
		if s := l.reasonLog[i]; s.version == since {
			if s.n <= len(r.Text) {
				out.Text, out.From = r.Text[s.n:], utf16Len(r.Text[:s.n])
			}
			break
		}
	}
	l.recordReason(version, r)
	return out
}

// recordReason remembers how much thinking the Update of version holds.
func (l *View) recordReason(version int64, r *toolmark.Reasoning) {
	n := 0
	if r != nil {
		n = len(r.Text)
	}
	if k := len(l.reasonLog); k > 0 && l.reasonLog[k-1].version == version {
		return
	}
	if len(l.reasonLog) == tailHistory {
		copy(l.reasonLog, l.reasonLog[1:])
		l.reasonLog = l.reasonLog[:tailHistory-1]
	}
	l.reasonLog = append(l.reasonLog, reasonSent{version: version, n: n})
}
