package faults

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// probeStats counts the answers of the clients that keep calling the API
// while PostgreSQL restarts.
type probeStats struct {
	mu       sync.Mutex
	total    int
	byStatus map[int]int
	other5xx []string // "GET /api/… 500" examples
	connErrs int
	no503RA  int // 503 answers without Retry-After
}

func (p *probeStats) record(method, path string, st int, retryAfter string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total++
	if err != nil {
		p.connErrs++
		return
	}
	p.byStatus[st]++
	if st >= 500 && st != 503 && len(p.other5xx) < 20 {
		p.other5xx = append(p.other5xx, fmt.Sprintf("%s %s %d", method, routeOf(path), st))
	}
	if st == 503 && retryAfter == "" {
		p.no503RA++
	}
}

func (p *probeStats) count(pred func(int) bool) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for st, c := range p.byStatus {
		if pred(st) {
			n += c
		}
	}
	return n
}

func (p *probeStats) summary() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var sts []int
	for st := range p.byStatus {
		sts = append(sts, st)
	}
	sort.Ints(sts)
	var parts []string
	for _, st := range sts {
		parts = append(parts, fmt.Sprintf("%d×%d", p.byStatus[st], st))
	}
	return strings.Join(parts, ", ")
}

// routeOf replaces the ids of a path by {id}.
func routeOf(path string) string {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if len(p) == 36 && strings.Count(p, "-") == 4 {
			parts[i] = "{id}"
		}
	}
	return strings.Join(parts, "/")
}

// pgRestart stops PostgreSQL while turns run on two replicas and clients
// keep calling every route, starts it again, and checks the answers and the
// turns.
func (s *suite) pgRestart(ctx context.Context) error {
	const sc = "pgrestart"
	cfg := s.cfg
	if s.cl.pg == nil {
		for _, name := range []string{"5xx other than 503 while PostgreSQL restarts", "turns completed once PostgreSQL is back"} {
			s.report.skip(sc, name, "needs the embedded PostgreSQL (run without DATABASE_URL)")
		}
		return nil
	}
	u, reps, err := s.setup(ctx, sc, serve{pace: 60 * time.Millisecond, grace: quickStop}, "pg-a", "pg-b")
	if err != nil {
		return err
	}
	p := &pgRun{s: s, u: u, reps: reps, stats: &probeStats{byStatus: map[int]int{}}, outcomes: map[string]int{}}
	for round := 1; round <= cfg.PGRounds; round++ {
		if err := p.round(ctx, round); err != nil {
			return err
		}
	}
	p.report()
	return nil
}

// pgRun is the pgrestart scenario's state across its rounds.
type pgRun struct {
	s    *suite
	u    user
	reps []*replica

	stats                    *probeStats
	completed, total, exited int // turns completed, turns, replicas that exited
	outcomes                 map[string]int
}

// pgTurns are the turns of a round and a conversation without one, which
// the probes name.
type pgTurns struct {
	turnIDs, convs []string
	spare          string
}

// round runs one restart: turns on both replicas, probes calling every
// route, PostgreSQL stopped and started again, and the turns' outcomes.
func (p *pgRun) round(ctx context.Context, round int) error {
	s, cfg := p.s, p.s.cfg
	t, err := p.startTurns(ctx)
	if err != nil {
		return err
	}
	time.Sleep(time.Second) // the turns are under way

	pctx, stopProbes := context.WithCancel(ctx)
	wg := p.probe(pctx, t)
	time.Sleep(200 * time.Millisecond)
	downAt, upAt, err := p.restartPostgres(ctx)
	if err != nil {
		stopProbes()
		wg.Wait()
		return err
	}
	time.Sleep(3 * time.Second) // keep calling while the replicas reconnect
	stopProbes()
	wg.Wait()

	if err := p.countOutcomes(ctx, t.turnIDs); err != nil {
		return err
	}
	for _, rep := range p.reps {
		if !rep.alive() {
			p.exited++
		}
	}
	s.progress("pgrestart %d/%d: PostgreSQL down for %s; %d requests so far (%s); turns: %s",
		round, cfg.PGRounds, upAt.Sub(downAt).Round(100*time.Millisecond), p.stats.total, p.stats.summary(), countsDetail(p.outcomes))
	return nil
}

// startTurns starts four long turns, alternately on each replica, and
// creates a spare conversation.
func (p *pgRun) startTurns(ctx context.Context) (pgTurns, error) {
	var t pgTurns
	for i := 0; i < 4; i++ {
		rep := p.reps[i%len(p.reps)]
		conv, id, err := p.u.startTurn(ctx, rep.URL, p.s.longPrompt())
		if err != nil {
			return t, err
		}
		t.turnIDs, t.convs = append(t.turnIDs, id), append(t.convs, conv)
	}
	spare, err := p.u.api(p.reps[0].URL).CreateConversation(ctx, "faults")
	if err != nil {
		return t, err
	}
	t.spare = spare.ID
	return t, nil
}

// probe starts three clients that call every route in turn, alternately
// on each replica, every 20 ms until pctx is done, recording each answer.
// The wait group is done when they have stopped.
func (p *pgRun) probe(pctx context.Context, t pgTurns) *sync.WaitGroup {
	var wg sync.WaitGroup
	var n atomic.Int64
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pctx.Err() == nil {
				k := n.Add(1)
				rep := p.reps[int(k)%len(p.reps)]
				m, path, body := p.s.probeRequest(int(k), t.convs[int(k)%len(t.convs)], t.turnIDs[int(k)%len(t.turnIDs)], t.spare)
				st, h, err := p.s.cl.status(pctx, rep.URL, p.u.token, m, path, body)
				if pctx.Err() != nil {
					return
				}
				ra := ""
				if h != nil {
					ra = h.Get("Retry-After")
				}
				p.stats.record(m, path, st, ra, err)
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	return &wg
}

// restartPostgres stops PostgreSQL, keeps it down for PGDown and starts it
// again; it returns when it stopped and when it was back.
func (p *pgRun) restartPostgres(ctx context.Context) (downAt, upAt time.Time, err error) {
	downAt = time.Now()
	if err := p.s.cl.stopPostgres(ctx); err != nil {
		return downAt, upAt, fmt.Errorf("stopping PostgreSQL: %w", err)
	}
	time.Sleep(p.s.cfg.PGDown)
	if err := p.s.cl.startPostgres(ctx); err != nil {
		return downAt, upAt, fmt.Errorf("starting PostgreSQL again: %w", err)
	}
	return downAt, time.Now(), nil
}

// countOutcomes waits up to PGSettle for the turns to be final and counts
// how they ended.
func (p *pgRun) countOutcomes(ctx context.Context, turnIDs []string) error {
	cfg := p.s.cfg
	pending, err := p.s.waitFinal(ctx, turnIDs, time.Now().Add(cfg.PGSettle))
	if err != nil {
		return err
	}
	rows, err := p.s.cl.turnRows(ctx, turnIDs)
	if err != nil {
		return err
	}
	for _, id := range turnIDs {
		p.total++
		st := rows[id].Status
		if _, ok := pending[id]; ok {
			st = "not final after " + cfg.PGSettle.String()
		}
		p.outcomes[st]++
		if st == "completed" {
			p.completed++
		}
	}
	return nil
}

// report adds the pgrestart scenario's criteria and figures to the report.
func (p *pgRun) report() {
	const sc = "pgrestart"
	cfg, rp, stats := p.s.cfg, p.s.report, p.stats
	other5xx := stats.count(func(st int) bool { return st >= 500 && st != 503 })
	rp.atMost(sc, "5xx other than 503 while PostgreSQL restarts", other5xx, 0, examplesOf(stats.other5xx, other5xx))
	rp.atMost(sc, "503 answers without Retry-After", stats.no503RA, 0, "")
	rp.check(sc, "turns completed once PostgreSQL is back", p.completed == p.total, fmt.Sprintf("%d of %d", p.completed, p.total),
		fmt.Sprintf("%d of %d", p.total, p.total), countsDetail(p.outcomes))
	rp.atMost(sc, "replicas that exited", p.exited, 0, "")
	rp.figure(sc, "restarts / requests tried / 503 seen / refused connections", "%d / %d / %d / %d",
		cfg.PGRounds, stats.total, stats.count(func(st int) bool { return st == 503 }), stats.connErrs)
	rp.figure(sc, "answers by status", "%s", stats.summary())
}

// probeRequest is the k-th request of the clients that keep calling the
// API: every route that reads or writes the database, in turn.
func (s *suite) probeRequest(k int, conv, turn, spare string) (method, path string, body []byte) {
	switch k % 10 {
	case 0:
		return "GET", "/api/conversations", nil
	case 1:
		return "GET", "/api/conversations/" + conv, nil
	case 2:
		return "GET", "/api/turns/" + turn, nil
	case 3:
		return "POST", "/api/conversations", []byte(`{"title":"probe"}`)
	case 4:
		return "POST", "/api/conversations/" + spare + "/turns", []byte(`{"content":"How does resume work?"}`)
	case 5:
		return "GET", "/readyz", nil
	case 6:
		return "GET", "/api/info", nil
	case 7:
		return "GET", "/api/turns/" + turn + "/events?after=1000000", nil
	case 8:
		return "DELETE", "/api/conversations/00000000-0000-4000-8000-000000000000", nil
	}
	return "POST", "/api/turns/00000000-0000-4000-8000-000000000000/cancel", nil
}
