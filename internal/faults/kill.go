package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/internal/bench"
	"github.com/toolmark/toolmark/store"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// quickStop is the grace every replica gets unless a scenario measures its
// drain: stopping replicas between rounds should not wait for turns.
const quickStop = 2 * time.Second

// killTurn is one turn of the kill scenario.
type killTurn struct {
	conv   string
	killAt time.Time
	fol    *follower // nil when no follower got the turn's id before the kill
}

// Kill modes: where in a round the replica dies.
const (
	afterBurst  = iota // 0–30 ms after a burst of turn requests is sent
	duringBurst        // while the server answers a burst: turns are being committed and leased
	randomPoint        // 0.1–1.5 s after a burst: turns queued, running tools, ending
	killModes
)

var modeNames = [killModes]string{"0–30 ms after a burst", "while a burst is answered", "at a random point"}

// kill runs the kill -9 rounds: a burst of turn requests on one replica,
// kill -9 in one of the kill modes (in turn), a restart, and the checks.
func (s *suite) kill(ctx context.Context) error {
	const sc = "kill"
	cfg := s.cfg
	// Short turns (0.3–1 s), so that a replica that adopts the turns it
	// finds can run them all within the 5 s bound.
	sv := serve{pace: 5 * time.Millisecond, grace: quickStop}
	u, reps, err := s.setup(ctx, sc, sv, "kill-0")
	if err != nil {
		return err
	}
	victim := reps[0]
	answerSpan, err := s.burstSpan(ctx, u, victim.URL, cfg.KillBurst)
	if err != nil {
		return err
	}
	s.progress("kill: a burst of %d turn requests is answered within %s", cfg.KillBurst, ms(answerSpan))
	turns := map[string]*killTurn{}
	var order, convs []string
	posted, answered := 0, 0
	late := map[string]turnRow{} // not final 5 s after the restart
	var modes [killModes]int
	for r := 1; r <= cfg.KillRounds; r++ {
		mode := (r - 1) % killModes
		modes[mode]++
		n := cfg.KillBurst
		if mode == randomPoint {
			n = max(2, cfg.KillBurst/2)
		}
		// Created in parallel, which also leaves one open connection per
		// request of the burst, so the burst reaches the server at once.
		api := u.api(victim.URL)
		roundConvs := make([]string, n)
		var created sync.WaitGroup
		var createErr error
		var mu sync.Mutex
		for i := range roundConvs {
			created.Add(1)
			go func() {
				defer created.Done()
				c, err := api.CreateConversation(ctx, "faults")
				mu.Lock()
				roundConvs[i] = c.ID
				if err != nil {
					createErr = err
				}
				mu.Unlock()
			}()
		}
		created.Wait()
		if createErr != nil {
			return createErr
		}
		convs = append(convs, roundConvs...)

		followers := map[string]*follower{}
		var posts, reads sync.WaitGroup
		burstAt := time.Now()
		for _, conv := range roundConvs {
			posts.Add(1)
			go func() {
				defer posts.Done()
				ti, err := api.PostTurn(ctx, conv, s.prompt(), "")
				if err != nil {
					return
				}
				f := &follower{u: u, turnID: ti.Turn.ID}
				mu.Lock()
				answered++
				followers[ti.Turn.ID] = f
				mu.Unlock()
				reads.Add(1)
				go func() {
					defer reads.Done()
					_, _ = f.connect(ctx, victim.URL) // ends when the replica dies
				}()
			}()
		}
		posted += n
		var delay time.Duration
		switch mode {
		case afterBurst:
			delay = s.between(0, 30*time.Millisecond)
		case duringBurst:
			delay = s.between(0, answerSpan)
		default:
			delay = s.between(100*time.Millisecond, 1500*time.Millisecond)
		}
		time.Sleep(time.Until(burstAt.Add(delay)))
		victim.Kill()
		killAt := time.Now()
		posts.Wait()
		reads.Wait()

		if victim, err = s.cl.start(ctx, fmt.Sprintf("kill-%d", r), sv); err != nil {
			return err
		}
		readyAt := time.Now()
		var ids []string
		for _, conv := range roundConvs {
			tids, err := u.turnsOf(ctx, victim.URL, conv)
			if err != nil {
				return fmt.Errorf("round %d: %w", r, err)
			}
			for _, id := range tids {
				if turns[id] == nil {
					turns[id] = &killTurn{conv: conv, killAt: killAt, fol: followers[id]}
					order = append(order, id)
					ids = append(ids, id)
				}
			}
		}
		pending, err := s.waitFinal(ctx, ids, readyAt.Add(5*time.Second))
		if err != nil {
			return err
		}
		for id, row := range pending {
			late[id] = row
		}
		s.progress("kill %d/%d (%s): %d turn requests, kill -9 %s after the burst, restart ready in %s; %d turns, %d not final 5 s after the restart",
			r, cfg.KillRounds, modeNames[mode], n, ms(delay), ms(readyAt.Sub(killAt)), len(ids), len(pending))
	}

	s.progress("kill: waiting up to %s for the turns left behind", cfg.KillSettle)
	never, err := s.waitFinal(ctx, order, time.Now().Add(cfg.KillSettle))
	if err != nil {
		return err
	}
	rows, err := s.cl.turnRows(ctx, order)
	if err != nil {
		return err
	}
	var ttt []time.Duration
	killed := 0
	for _, id := range order {
		kt, row := turns[id], rows[id]
		if row.Finished == nil || row.Finished.After(kt.killAt) {
			killed++ // not final when its replica died
			if row.Finished != nil {
				ttt = append(ttt, row.Finished.Sub(kt.killAt))
			}
		}
	}

	// A conversation whose turn is final takes a new one.
	api := u.api(victim.URL)
	refusing, refusingWhy := 0, map[string]int{}
	for _, conv := range convs {
		ti, err := api.PostTurn(ctx, conv, "Are you there?", "")
		if statusOf(err) == 409 {
			refusing++
			for _, tid := range order {
				if turns[tid].conv == conv {
					if row, ok := never[tid]; ok {
						refusingWhy[reasonKey(row)]++
					}
				}
			}
		}
		if err == nil {
			_, _ = api.CancelTurn(ctx, ti.Turn.ID)
		}
	}

	// Tool-call rows, event log and content agree; followers' events are in
	// the log.
	var rowsNoEvents, disagree, lost, checked int
	var rowsNoEventsEx, disagreeEx, lostEx []string
	for _, id := range order {
		kt := turns[id]
		st, err := api.GetTurn(ctx, id)
		if err != nil {
			return err
		}
		var log []frame
		if st.Turn.LastSeq > 0 { // a turn that never logged an event has an empty log
			if log, err = u.log(ctx, victim.URL, id, st.Turn.LastSeq, 5*time.Second); err != nil {
				return fmt.Errorf("reading the log of %s: %w", id, err)
			}
		}
		a := auditToolCalls(st, log)
		rowsNoEvents += len(a.rowsWithoutEvents)
		for _, c := range a.rowsWithoutEvents {
			rowsNoEventsEx = append(rowsNoEventsEx, fmt.Sprintf("turn %s call %s", id, c))
		}
		disagree += len(a.disagreements)
		for _, d := range a.disagreements {
			disagreeEx = append(disagreeEx, fmt.Sprintf("turn %s: %s", id, d))
		}
		if kt.fol != nil {
			got := kt.fol.snapshot()
			checked += len(got)
			m, d := compareWithLog(got, log)
			lost += m + d
			if m+d > 0 {
				lostEx = append(lostEx, fmt.Sprintf("turn %s: %d missing, %d different", id, m, d))
			}
		}
	}

	r := s.report
	r.atLeast(sc, "turns not final when their replica was killed", killed, 1, "no kill hit a turn: nothing was tested")
	r.atMost(sc, "turns not final 5 s after the restart", len(late), 0, breakdown(late))
	r.atMost(sc, fmt.Sprintf("turns still not final %s later", cfg.KillSettle), len(never), 0, breakdown(never))
	r.atMost(sc, "conversations refusing a new turn (409)", refusing, 0, countsDetail(refusingWhy))
	r.atMost(sc, "tool-call rows without their events", rowsNoEvents, 0, examples(rowsNoEventsEx))
	r.atMost(sc, "tool calls whose row, events and content disagree", disagree, 0, examples(disagreeEx))
	r.atMost(sc, "events received before the kill not found again identical", lost, 0, examples(lostEx))
	r.figure(sc, "kill -9 rounds", "%d (%d %s, %d %s, %d %s)", cfg.KillRounds,
		modes[afterBurst], modeNames[afterBurst], modes[duringBurst], modeNames[duringBurst], modes[randomPoint], modeNames[randomPoint])
	r.figure(sc, "turn requests sent / answered 202 before the kill", "%d / %d", posted, answered)
	r.figure(sc, "turns found / not final at the kill", "%d / %d", len(order), killed)
	r.figure(sc, "events received by followers before the kill, checked", "%d", checked)
	if len(ttt) == 0 {
		r.figure(sc, "time from the kill to the terminal state, p50 / max", "— (no turn not final at the kill reached it)")
	} else {
		sum := bench.Summarize(ttt)
		r.figure(sc, "time from the kill to the terminal state, p50 / max", "%s / %s (of the %d turns that reached it)", ms(sum.P50), ms(sum.Max), sum.N)
	}
	return nil
}

// burstSpan sends a burst of n turn requests without a fault and returns
// how long the last answer took: the span in which a kill lands while turns
// are being created and leased. It waits for those turns to end.
func (s *suite) burstSpan(ctx context.Context, u user, base string, n int) (time.Duration, error) {
	api := u.api(base)
	convs := make([]string, n)
	for i := range convs {
		c, err := api.CreateConversation(ctx, "faults")
		if err != nil {
			return 0, err
		}
		convs[i] = c.ID
	}
	var mu sync.Mutex
	var span time.Duration
	var ids []string
	var wg sync.WaitGroup
	start := time.Now()
	for _, conv := range convs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ti, err := api.PostTurn(ctx, conv, s.prompt(), "")
			mu.Lock()
			defer mu.Unlock()
			span = max(span, time.Since(start))
			if err == nil {
				ids = append(ids, ti.Turn.ID)
			}
		}()
	}
	wg.Wait()
	_, err := s.waitFinal(ctx, ids, time.Now().Add(time.Minute))
	return span, err
}

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
