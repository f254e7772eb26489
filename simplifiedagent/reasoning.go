package simplifiedagent

import (
	"fmt"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent/llmstream"
	"github.com/toolmark/toolmark/simplifiedagent/modelerr"
)

// A reasoning model's thinking: streamed as reasoning_delta events (never
// into the answer's text), its provider items kept in the assistant
// message of each round and, with the round's last reasoning_delta, handed
// to whoever stores the answer, so that later rounds and later turns send
// them back (see BuildHistory).

// answerBegan notes that the answer's text or a tool call began: the
// round's thinking, if any, ended.
func (rs *roundStream) answerBegan() {
	rs.mu.Lock()
	if !rs.thinkStart.IsZero() && rs.thinkEnd.IsZero() {
		rs.thinkEnd = time.Now()
	}
	rs.mu.Unlock()
}

// thinking takes a streamed piece of the model's thinking.
func (l *loop) thinking(rs *roundStream, text string) {
	if text == "" {
		return
	}
	rs.mu.Lock()
	if rs.thinkStart.IsZero() {
		rs.thinkStart = time.Now()
	}
	rs.think.WriteString(text)
	rs.mu.Unlock()
	if l.showText {
		l.s.reasoning(toolmark.ReasoningDeltaData{Round: rs.round, Text: text})
	}
}

// thoughtWhole shows the thinking of a reply that returned it without
// streaming it.
func (l *loop) thoughtWhole(rs *roundStream, parts []toolmark.ReasoningPart) {
	rs.mu.Lock()
	streamed := rs.think.Len() > 0
	rs.mu.Unlock()
	if streamed {
		return
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	l.thinking(rs, b.String())
}

// thought ends the round's thinking: its duration and its items, their
// calls named by the ids of their tags.
func (l *loop) thought(rs *roundStream, parts []toolmark.ReasoningPart, calls []*call) {
	rs.mu.Lock()
	start, end, streamed := rs.thinkStart, rs.thinkEnd, rs.think.Len() > 0
	rs.mu.Unlock()
	if !l.showText || !streamed && len(parts) == 0 {
		return
	}
	if end.IsZero() {
		end = time.Now()
	}
	d := toolmark.ReasoningDeltaData{Round: rs.round, Done: true}
	if !start.IsZero() {
		d.DurationMs = end.Sub(start).Milliseconds()
	}
	for _, p := range parts {
		p.Round = rs.round
		if p.CallID != "" {
			for _, c := range calls {
				if c.modelID == p.CallID && c.id != "" {
					p.CallID = c.id
				}
			}
		}
		d.Parts = append(d.Parts, p)
	}
	l.s.reasoning(d)
}

// reasoning emits a reasoning_delta.
func (s *session) reasoning(d toolmark.ReasoningDeltaData) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.emitLocked(toolmark.Draft{Type: toolmark.EventReasoningDelta, Data: d})
}

// assistantMessage is the model's reply as it goes back to the model in
// the next round: its reasoning items first (Anthropic wants its thinking
// blocks before the text and the tool_use blocks), its text, its calls.
func assistantMessage(rep reply) llms.MessageContent {
	ai := llms.MessageContent{Role: llms.ChatMessageTypeAI}
	for _, p := range rep.reasoning {
		ai.Parts = append(ai.Parts, llmstream.Part(p))
	}
	if rep.text != "" {
		ai.Parts = append(ai.Parts, llms.TextContent{Text: rep.text})
	}
	for _, c := range rep.calls {
		ai.Parts = append(ai.Parts, llms.ToolCall{ID: c.modelID, Type: "function",
			FunctionCall: &llms.FunctionCall{Name: c.name, Arguments: c.argsText()}})
	}
	return ai
}

// Stop reasons of the providers (finish_reason, stop_reason).
const (
	stopPauseTurn = "pause_turn" // Anthropic: a long turn paused; sent back as it is, it goes on
)

// stopError returns the error of a reply that stopped short: cut at the
// token limit (its calls are not run: their arguments are cut too),
// filtered, or declined; nil for a reply that ended as it should.
func stopError(stop string) error {
	code := ""
	switch stop {
	case "length", "max_tokens":
		code = toolmark.ETOKENLIMIT
	case "content_filter":
		code = toolmark.EFILTERED
	case "refusal":
		code = toolmark.EREFUSED
	case "model_context_window_exceeded":
		code = toolmark.ECONTEXTTOOLONG
	default:
		return nil
	}
	return modelerr.New(code, fmt.Errorf("the model stopped: %s", stop))
}
