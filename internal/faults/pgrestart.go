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
	stats := &probeStats{byStatus: map[int]int{}}
	completed, total, exited := 0, 0, 0
	outcomes := map[string]int{}
	for round := 1; round <= cfg.PGRounds; round++ {
		var turnIDs, convs []string
		for i := 0; i < 4; i++ {
			rep := reps[i%len(reps)]
			conv, id, err := u.startTurn(ctx, rep.URL, s.longPrompt())
			if err != nil {
				return err
			}
			turnIDs, convs = append(turnIDs, id), append(convs, conv)
		}
		spare, err := u.api(reps[0].URL).CreateConversation(ctx, "faults")
		if err != nil {
			return err
		}
		time.Sleep(time.Second) // the turns are under way

		pctx, stopProbes := context.WithCancel(ctx)
		var wg sync.WaitGroup
		var n atomic.Int64
		for w := 0; w < 3; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for pctx.Err() == nil {
					k := n.Add(1)
					rep := reps[int(k)%len(reps)]
					m, path, body := s.probeRequest(int(k), convs[int(k)%len(convs)], turnIDs[int(k)%len(turnIDs)], spare.ID)
					st, h, err := s.cl.status(pctx, rep.URL, u.token, m, path, body)
					if pctx.Err() != nil {
						return
					}
					ra := ""
					if h != nil {
						ra = h.Get("Retry-After")
					}
					stats.record(m, path, st, ra, err)
					time.Sleep(20 * time.Millisecond)
				}
			}()
		}
		time.Sleep(200 * time.Millisecond)
		downAt := time.Now()
		if err := s.cl.stopPostgres(ctx); err != nil {
			stopProbes()
			wg.Wait()
			return fmt.Errorf("stopping PostgreSQL: %w", err)
		}
		time.Sleep(cfg.PGDown)
		if err := s.cl.startPostgres(ctx); err != nil {
			stopProbes()
			wg.Wait()
			return fmt.Errorf("starting PostgreSQL again: %w", err)
		}
		upAt := time.Now()
		time.Sleep(3 * time.Second) // keep calling while the replicas reconnect
		stopProbes()
		wg.Wait()

		pending, err := s.waitFinal(ctx, turnIDs, time.Now().Add(cfg.PGSettle))
		if err != nil {
			return err
		}
		rows, err := s.cl.turnRows(ctx, turnIDs)
		if err != nil {
			return err
		}
		for _, id := range turnIDs {
			total++
			st := rows[id].Status
			if _, ok := pending[id]; ok {
				st = "not final after " + cfg.PGSettle.String()
			}
			outcomes[st]++
			if st == "completed" {
				completed++
			}
		}
		for _, rep := range reps {
			if !rep.alive() {
				exited++
			}
		}
		s.progress("pgrestart %d/%d: PostgreSQL down for %s; %d requests so far (%s); turns: %s",
			round, cfg.PGRounds, upAt.Sub(downAt).Round(100*time.Millisecond), stats.total, stats.summary(), countsDetail(outcomes))
	}
	other5xx := stats.count(func(st int) bool { return st >= 500 && st != 503 })
	rp := s.report
	rp.atMost(sc, "5xx other than 503 while PostgreSQL restarts", other5xx, 0, examplesOf(stats.other5xx, other5xx))
	rp.atMost(sc, "503 answers without Retry-After", stats.no503RA, 0, "")
	rp.check(sc, "turns completed once PostgreSQL is back", completed == total, fmt.Sprintf("%d of %d", completed, total),
		fmt.Sprintf("%d of %d", total, total), countsDetail(outcomes))
	rp.atMost(sc, "replicas that exited", exited, 0, "")
	rp.figure(sc, "restarts / requests tried / 503 seen / refused connections", "%d / %d / %d / %d",
		cfg.PGRounds, stats.total, stats.count(func(st int) bool { return st == 503 }), stats.connErrs)
	rp.figure(sc, "answers by status", "%s", stats.summary())
	return nil
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
