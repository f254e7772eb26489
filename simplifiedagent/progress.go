package simplifiedagent

import (
	"context"
	"math"
	"strings"
	"time"
	"unicode"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// MaxProgressMessageBytes caps the message of a tool_progress event.
const MaxProgressMessageBytes = 300

// MinProgressInterval is how often a call's progress is reported at most:
// reports that come sooner are dropped (but not the one that reaches the
// total), so a tool that reports in a tight loop does not flood the log.
const MinProgressInterval = 100 * time.Millisecond

// ReportProgress reports how far the tool call whose context ctx is got:
// progress out of total (0 when unknown) and an optional message in the
// tool's own words. It emits a tool_progress event, which the status bubble
// shows ("trigger-long-running-operation: 2 of 3"), at most one per
// MinProgressInterval. It does nothing outside
// a tool call, for a call that is already final, for values that are not
// finite numbers, and after Run returned. It is safe for concurrent use.
func ReportProgress(ctx context.Context, progress, total float64, message string) {
	ci := callFromContext(ctx)
	if ci == nil || !finite(progress) || !finite(total) {
		return
	}
	ci.s.progress(ci.c, toolmark.ToolProgressData{ToolCallID: ci.c.id, Progress: progress,
		Total: max(total, 0), Message: toolcallmarkup.OneLine(noControls(message), MaxProgressMessageBytes)})
}

// noControls turns control characters (terminal escapes among them) into
// spaces: the message is shown in the page and in terminals.
func noControls(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// progress emits a tool_progress event for c while it runs.
func (s *session) progress(c *call, d toolmark.ToolProgressData) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || !c.tagged || c.status != toolcallmarkup.StatusRunning {
		return
	}
	now := time.Now()
	if now.Sub(c.progressAt) < MinProgressInterval && (d.Total == 0 || d.Progress < d.Total) {
		return
	}
	c.progressAt = now
	s.emitLocked(toolmark.Draft{Type: toolmark.EventToolProgress, Data: d})
}
