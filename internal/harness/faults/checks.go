package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/store"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// waitFinal polls the database until every turn of ids is final or the
// deadline passes, and returns the rows of those that are not.
func (s *suite) waitFinal(ctx context.Context, ids []string, deadline time.Time) (map[string]turnRow, error) {
	for {
		rows, err := s.cl.turnRows(ctx, ids)
		if err != nil && store.Unavailable(err) && time.Now().Before(deadline) {
			// PostgreSQL restarting under the pgrestart scenario.
			time.Sleep(200 * time.Millisecond)
			continue
		}
		if err != nil {
			return nil, err
		}
		pending := map[string]turnRow{}
		for _, id := range ids {
			if row, ok := rows[id]; ok && !toolmark.TurnStatus(row.Status).Final() {
				pending[id] = row
			}
		}
		if len(pending) == 0 || time.Now().After(deadline) {
			return pending, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// reasonKey groups non-final turns by why they are not final.
func reasonKey(t turnRow) string {
	switch {
	case t.LeaseOwner == nil:
		return t.Status + " with no lease"
	case t.LeaseExpires != nil && t.LeaseExpires.After(t.Now):
		return t.Status + " with a lease not yet expired"
	}
	return t.Status + " with an expired lease"
}

// breakdown says how many turns are not final for each reason.
func breakdown(rows map[string]turnRow) string {
	counts := map[string]int{}
	for _, r := range rows {
		counts[reasonKey(r)]++
	}
	return countsDetail(counts)
}

func countsDetail(counts map[string]int) string {
	var parts []string
	for k, n := range counts {
		parts = append(parts, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// examples lists a few of many failures.
func examples(xs []string) string { return examplesOf(xs, len(xs)) }

// examplesOf lists a few of total failures, xs holding some of them.
func examplesOf(xs []string, total int) string {
	if total > 3 && len(xs) >= 3 {
		return strings.Join(xs[:3], "; ") + fmt.Sprintf("; … %d in all", total)
	}
	return strings.Join(xs, "; ")
}

// audit is what auditToolCalls found in one turn.
type audit struct {
	rowsWithoutEvents []string // ids of tool-call rows the log never started
	disagreements     []string
}

// auditToolCalls compares a turn's tool-call rows (GET /api/turns/{id}) and
// the tags of its content with its event log. Every row needs a
// tool_call_started event; in a final turn every call's row, its last event
// and its tag in the content must agree on a final status.
func auditToolCalls(st client.TurnState, log []frame) audit {
	var a audit
	started := map[string]bool{}
	status := map[string]string{}
	for _, f := range log {
		switch f.Type {
		case toolmark.EventToolCallStarted, toolmark.EventToolCallDelta, toolmark.EventToolCallRunning,
			toolmark.EventToolCallSuccess, toolmark.EventToolCallError:
			var e struct {
				Data toolmark.ToolCallData `json:"data"`
			}
			if json.Unmarshal([]byte(f.Data), &e) != nil || e.Data.ToolCallID == "" {
				continue
			}
			if f.Type == toolmark.EventToolCallStarted {
				started[e.Data.ToolCallID] = true
			}
			if e.Data.Status != "" {
				status[e.Data.ToolCallID] = e.Data.Status
			}
		}
	}
	rows := map[string]string{}
	for _, c := range st.ToolCalls {
		rows[c.ID] = c.Status
		if !started[c.ID] {
			a.rowsWithoutEvents = append(a.rowsWithoutEvents, fmt.Sprintf("%s (row %s)", c.ID, c.Status))
		}
	}
	if !st.Turn.Status.Final() {
		return a
	}
	tags := map[string]string{}
	for _, tc := range toolcallmarkup.Parse(st.Content) {
		tags[tc.ID] = string(tc.Status)
	}
	for id := range started {
		row, hasRow := rows[id]
		switch {
		case !hasRow:
			a.disagreements = append(a.disagreements, fmt.Sprintf("call %s in the log has no row", id))
		case row != status[id]:
			a.disagreements = append(a.disagreements, fmt.Sprintf("call %s: row %s, log %s", id, row, status[id]))
		case !toolcallmarkup.Status(row).Final():
			a.disagreements = append(a.disagreements, fmt.Sprintf("call %s is %s in a final turn", id, row))
		}
		if tag, ok := tags[id]; !ok || tag != status[id] {
			a.disagreements = append(a.disagreements, fmt.Sprintf("call %s: tag %q, log %s", id, tag, status[id]))
		}
	}
	return a
}
