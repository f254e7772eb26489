package faults

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/internal/harness/bench"
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
	cfg := s.cfg
	// Short turns (0.3–1 s), so that a replica that adopts the turns it
	// finds can run them all within the 5 s bound.
	sv := serve{pace: 5 * time.Millisecond, grace: quickStop}
	u, reps, err := s.setup(ctx, "kill", sv, "kill-0")
	if err != nil {
		return err
	}
	k := &killRun{s: s, u: u, sv: sv, victim: reps[0], turns: map[string]*killTurn{}, late: map[string]turnRow{}}
	if k.answerSpan, err = s.burstSpan(ctx, u, k.victim.URL, cfg.KillBurst); err != nil {
		return err
	}
	s.progress("kill: a burst of %d turn requests is answered within %s", cfg.KillBurst, ms(k.answerSpan))
	for r := 1; r <= cfg.KillRounds; r++ {
		if err := k.round(ctx, r); err != nil {
			return err
		}
	}

	s.progress("kill: waiting up to %s for the turns left behind", cfg.KillSettle)
	var f killFindings
	if f.never, err = s.waitFinal(ctx, k.order, time.Now().Add(cfg.KillSettle)); err != nil {
		return err
	}
	if f.killed, f.ttt, err = k.killedTurns(ctx); err != nil {
		return err
	}
	api := u.api(k.victim.URL)
	f.refusing, f.refusingWhy = k.refusingConversations(ctx, api, f.never)
	if f.audit, err = k.auditTurns(ctx, api); err != nil {
		return err
	}
	k.report(f)
	return nil
}

// killRun is the kill scenario's state across its rounds.
type killRun struct {
	s          *suite
	u          user
	sv         serve
	victim     *replica      // the replica of the current round
	answerSpan time.Duration // how long a burst takes to be answered without a fault

	turns            map[string]*killTurn
	order            []string           // the ids of turns, in the order found
	convs            []string           // every conversation of every round
	posted, answered int                // turn requests sent, and answered 202 before the kill
	late             map[string]turnRow // not final 5 s after the restart
	modes            [killModes]int     // rounds of each kill mode
}

// killFindings is what the checks after the last round found.
type killFindings struct {
	never       map[string]turnRow // still not final after KillSettle
	killed      int                // turns not final when their replica died
	ttt         []time.Duration    // from the kill to the terminal state, of those that reached it
	refusing    int                // conversations answering 409 to a new turn
	refusingWhy map[string]int
	audit       killAudit
}

// killAudit is what the tool-call and follower checks of every turn found.
type killAudit struct {
	rowsNoEvents, disagree, lost, checked int
	rowsNoEventsEx, disagreeEx, lostEx    []string
}

// round runs kill round r: a burst of turn requests, kill -9 at the
// round's mode, a restart, and the wait for the turns found to be final.
func (k *killRun) round(ctx context.Context, r int) error {
	s, cfg := k.s, k.s.cfg
	mode := (r - 1) % killModes
	k.modes[mode]++
	n := cfg.KillBurst
	if mode == randomPoint {
		n = max(2, cfg.KillBurst/2)
	}
	api := k.u.api(k.victim.URL)
	roundConvs, err := createConversations(ctx, api, n)
	if err != nil {
		return err
	}
	k.convs = append(k.convs, roundConvs...)

	b := k.burst(ctx, api, roundConvs)
	k.posted += n
	delay := k.killDelay(mode)
	time.Sleep(time.Until(b.at.Add(delay)))
	k.victim.Kill()
	killAt := time.Now()
	b.wait()
	k.answered += b.answered

	if k.victim, err = s.cl.start(ctx, fmt.Sprintf("kill-%d", r), k.sv); err != nil {
		return err
	}
	readyAt := time.Now()
	ids, err := k.findTurns(ctx, r, roundConvs, killAt, b.followers)
	if err != nil {
		return err
	}
	pending, err := s.waitFinal(ctx, ids, readyAt.Add(5*time.Second))
	if err != nil {
		return err
	}
	for id, row := range pending {
		k.late[id] = row
	}
	s.progress("kill %d/%d (%s): %d turn requests, kill -9 %s after the burst, restart ready in %s; %d turns, %d not final 5 s after the restart",
		r, cfg.KillRounds, modeNames[mode], n, ms(delay), ms(readyAt.Sub(killAt)), len(ids), len(pending))
	return nil
}

// createConversations creates n conversations in parallel, which also
// leaves one open connection per request of the burst that follows, so
// that the burst reaches the server at once.
func createConversations(ctx context.Context, api *client.Client, n int) ([]string, error) {
	convs := make([]string, n)
	var created sync.WaitGroup
	var createErr error
	var mu sync.Mutex
	for i := range convs {
		created.Add(1)
		go func() {
			defer created.Done()
			c, err := api.CreateConversation(ctx, "faults")
			mu.Lock()
			convs[i] = c.ID
			if err != nil {
				createErr = err
			}
			mu.Unlock()
		}()
	}
	created.Wait()
	return convs, createErr
}

// killBurst is one burst of turn requests and the followers of the turns
// whose requests were answered.
type killBurst struct {
	at           time.Time // when the burst was sent
	posts, reads sync.WaitGroup
	mu           sync.Mutex
	answered     int
	followers    map[string]*follower // by turn id
}

// burst posts a turn in each conversation of convs, at once, and has a
// follower read each turn whose request is answered, until the replica
// dies.
func (k *killRun) burst(ctx context.Context, api *client.Client, convs []string) *killBurst {
	b := &killBurst{followers: map[string]*follower{}}
	base := k.victim.URL
	b.at = time.Now()
	for _, conv := range convs {
		b.posts.Add(1)
		go func() {
			defer b.posts.Done()
			ti, err := api.PostTurn(ctx, conv, k.s.prompt(), "")
			if err != nil {
				return
			}
			f := &follower{u: k.u, turnID: ti.Turn.ID}
			b.mu.Lock()
			b.answered++
			b.followers[ti.Turn.ID] = f
			b.mu.Unlock()
			b.reads.Add(1)
			go func() {
				defer b.reads.Done()
				_, _ = f.connect(ctx, base) // ends when the replica dies
			}()
		}()
	}
	return b
}

// wait waits for every request of the burst and every follower to end.
func (b *killBurst) wait() {
	b.posts.Wait()
	b.reads.Wait()
}

// killDelay is when, after a burst, the kill of a round of mode lands.
func (k *killRun) killDelay(mode int) time.Duration {
	switch mode {
	case afterBurst:
		return k.s.between(0, 30*time.Millisecond)
	case duringBurst:
		return k.s.between(0, k.answerSpan)
	}
	return k.s.between(100*time.Millisecond, 1500*time.Millisecond)
}

// findTurns lists, on the restarted replica, the turns of a round's
// conversations (those whose request got no answer too), records the new
// ones and returns their ids.
func (k *killRun) findTurns(ctx context.Context, r int, convs []string, killAt time.Time, followers map[string]*follower) ([]string, error) {
	var ids []string
	for _, conv := range convs {
		tids, err := k.u.turnsOf(ctx, k.victim.URL, conv)
		if err != nil {
			return nil, fmt.Errorf("round %d: %w", r, err)
		}
		for _, id := range tids {
			if k.turns[id] == nil {
				k.turns[id] = &killTurn{conv: conv, killAt: killAt, fol: followers[id]}
				k.order = append(k.order, id)
				ids = append(ids, id)
			}
		}
	}
	return ids, nil
}

// killedTurns counts the turns not final when their replica died, and
// returns the time from the kill to the terminal state of those that
// reached it.
func (k *killRun) killedTurns(ctx context.Context) (int, []time.Duration, error) {
	rows, err := k.s.cl.turnRows(ctx, k.order)
	if err != nil {
		return 0, nil, err
	}
	var ttt []time.Duration
	killed := 0
	for _, id := range k.order {
		kt, row := k.turns[id], rows[id]
		if row.Finished == nil || row.Finished.After(kt.killAt) {
			killed++ // not final when its replica died
			if row.Finished != nil {
				ttt = append(ttt, row.Finished.Sub(kt.killAt))
			}
		}
	}
	return killed, ttt, nil
}

// refusingConversations posts a new turn in every conversation, which one
// whose turn is final takes, and counts those answering 409, by why their
// turns are not final (never holds those).
func (k *killRun) refusingConversations(ctx context.Context, api *client.Client, never map[string]turnRow) (int, map[string]int) {
	refusing, refusingWhy := 0, map[string]int{}
	for _, conv := range k.convs {
		ti, err := api.PostTurn(ctx, conv, "Are you there?", "")
		if statusOf(err) == 409 {
			refusing++
			for _, tid := range k.order {
				if k.turns[tid].conv == conv {
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
	return refusing, refusingWhy
}

// auditTurns checks that every turn's tool-call rows, event log and
// content agree, and that its follower's events are in the log.
func (k *killRun) auditTurns(ctx context.Context, api *client.Client) (killAudit, error) {
	var a killAudit
	for _, id := range k.order {
		if err := k.auditTurn(ctx, api, id, &a); err != nil {
			return a, err
		}
	}
	return a, nil
}

// auditTurn adds to a what the checks of one turn find.
func (k *killRun) auditTurn(ctx context.Context, api *client.Client, id string, a *killAudit) error {
	kt := k.turns[id]
	st, err := api.GetTurn(ctx, id)
	if err != nil {
		return err
	}
	var log []frame
	if st.Turn.LastSeq > 0 { // a turn that never logged an event has an empty log
		if log, err = k.u.log(ctx, k.victim.URL, id, st.Turn.LastSeq, 5*time.Second); err != nil {
			return fmt.Errorf("reading the log of %s: %w", id, err)
		}
	}
	tc := auditToolCalls(st, log)
	a.rowsNoEvents += len(tc.rowsWithoutEvents)
	for _, c := range tc.rowsWithoutEvents {
		a.rowsNoEventsEx = append(a.rowsNoEventsEx, fmt.Sprintf("turn %s call %s", id, c))
	}
	a.disagree += len(tc.disagreements)
	for _, d := range tc.disagreements {
		a.disagreeEx = append(a.disagreeEx, fmt.Sprintf("turn %s: %s", id, d))
	}
	if kt.fol != nil {
		got := kt.fol.snapshot()
		a.checked += len(got)
		m, d := compareWithLog(got, log)
		a.lost += m + d
		if m+d > 0 {
			a.lostEx = append(a.lostEx, fmt.Sprintf("turn %s: %d missing, %d different", id, m, d))
		}
	}
	return nil
}

// report adds the kill scenario's criteria and figures to the report.
func (k *killRun) report(f killFindings) {
	const sc = "kill"
	cfg, r, a := k.s.cfg, k.s.report, f.audit
	r.atLeast(sc, "turns not final when their replica was killed", f.killed, 1, "no kill hit a turn: nothing was tested")
	r.atMost(sc, "turns not final 5 s after the restart", len(k.late), 0, breakdown(k.late))
	r.atMost(sc, fmt.Sprintf("turns still not final %s later", cfg.KillSettle), len(f.never), 0, breakdown(f.never))
	r.atMost(sc, "conversations refusing a new turn (409)", f.refusing, 0, countsDetail(f.refusingWhy))
	r.atMost(sc, "tool-call rows without their events", a.rowsNoEvents, 0, examples(a.rowsNoEventsEx))
	r.atMost(sc, "tool calls whose row, events and content disagree", a.disagree, 0, examples(a.disagreeEx))
	r.atMost(sc, "events received before the kill not found again identical", a.lost, 0, examples(a.lostEx))
	r.figure(sc, "kill -9 rounds", "%d (%d %s, %d %s, %d %s)", cfg.KillRounds,
		k.modes[afterBurst], modeNames[afterBurst], k.modes[duringBurst], modeNames[duringBurst], k.modes[randomPoint], modeNames[randomPoint])
	r.figure(sc, "turn requests sent / answered 202 before the kill", "%d / %d", k.posted, k.answered)
	r.figure(sc, "turns found / not final at the kill", "%d / %d", len(k.order), f.killed)
	r.figure(sc, "events received by followers before the kill, checked", "%d", a.checked)
	if len(f.ttt) == 0 {
		r.figure(sc, "time from the kill to the terminal state, p50 / max", "— (no turn not final at the kill reached it)")
	} else {
		sum := bench.Summarize(f.ttt)
		r.figure(sc, "time from the kill to the terminal state, p50 / max", "%s / %s (of the %d turns that reached it)", ms(sum.P50), ms(sum.Max), sum.N)
	}
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
