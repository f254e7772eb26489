package bench

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// exposition is a /metrics page with the two histograms: commits counted
// in buckets of 1, 2 and 4 ms, scheduling in one of 1 ms.
func exposition(commits [3]int, commitSum float64, sched int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# TYPE %s histogram\n", commitMetric)
	cum := 0
	for i, le := range []string{"0.001", "0.002", "0.004"} {
		cum += commits[i]
		fmt.Fprintf(&b, "%s_bucket{le=%q} %d\n", commitMetric, le, cum)
	}
	fmt.Fprintf(&b, "%s_bucket{le=\"+Inf\"} %d\n%s_sum %g\n%s_count %d\n", commitMetric, cum+1, commitMetric, commitSum, commitMetric, cum+1)
	fmt.Fprintf(&b, "# TYPE %s histogram\n%s_bucket{le=\"0.001\"} %d\n%s_bucket{le=\"+Inf\"} %d\n%s_sum %g\n%s_count %d\n",
		schedMetric, schedMetric, sched, schedMetric, sched, schedMetric, float64(sched)*0.0001, schedMetric, sched)
	return b.String()
}

func TestServerStages(t *testing.T) {
	page := exposition([3]int{10, 0, 0}, 0.01, 5)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, page)
	}))
	defer srv.Close()
	ctx := context.Background()
	before, err := readStages(ctx, srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	// Between the readings: 50 commits of at most 1 ms and 48 of 2 to
	// 4 ms, 0.2 s in all; 100 waits of at most 1 ms.
	page = exposition([3]int{60, 0, 48}, 0.21, 105)
	after, err := readStages(ctx, srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	// The +Inf bucket holds one more than the others in each reading.
	st, err := stagesSince(before, after)
	if err != nil {
		t.Fatal(err)
	}
	c := st.Commits
	if c.Count != 98 || time.Duration(c.Mean).Round(time.Microsecond) != 2041*time.Microsecond ||
		time.Duration(c.P50) != time.Millisecond || time.Duration(c.P99) != 4*time.Millisecond {
		t.Errorf("commits %+v: want 98, mean 2.04 ms, p50 at most 1 ms, p99 at most 4 ms", c)
	}
	if s := st.Scheduling; s.Count != 100 || time.Duration(s.Mean) != 100*time.Microsecond || time.Duration(s.P99) != time.Millisecond {
		t.Errorf("scheduling %+v: want 100, mean 0.1 ms, p99 at most 1 ms", s)
	}

	// A histogram whose buckets changed, or one not there, is an error.
	changed := after
	changed.commits.bounds = append([]float64{0.0005}, changed.commits.bounds[1:]...)
	if _, err := stagesSince(before, changed); err == nil {
		t.Error("buckets changed between readings: want an error")
	}
	if _, err := stagesSince(after, before); err == nil || !strings.Contains(err.Error(), "restarted") {
		t.Errorf("counts that fell between readings: got %v, want an error saying the server restarted", err)
	}
	page = "# TYPE other counter\nother 1\n"
	if _, err := readStages(ctx, srv.Client(), srv.URL); err == nil || !strings.Contains(err.Error(), commitMetric) {
		t.Errorf("no histograms: got %v, want an error naming %s", err, commitMetric)
	}
}

func TestFmtHistShowsSmallBoundsInMicroseconds(t *testing.T) {
	f := HistFigure{Count: 3, Mean: Duration(2 * time.Microsecond), P50: Duration(640 * time.Nanosecond), P99: Duration(917504 * time.Nanosecond)}
	if got, want := fmtHist(f), "mean 2.00 µs, p50 ≤ 0.64 µs, p99 ≤ 0.92 ms (n=3)"; got != want {
		t.Errorf("fmtHist = %q, want %q", got, want)
	}
}

func TestHistogramQuantileInOpenBucket(t *testing.T) {
	h := histogram{count: 10, sum: 1, bounds: []float64{0.001, 0.002, math.Inf(1)}, cum: []uint64{5, 8, 10}}
	if got := time.Duration(h.atMost(0.5)); got != time.Millisecond {
		t.Errorf("p50 at most %v, want 1 ms", got)
	}
	if got := time.Duration(h.atMost(0.99)); got != 2*time.Millisecond {
		t.Errorf("p99 in the open bucket: at most %v, want the highest finite bound, 2 ms", got)
	}
	noInf := histogram{count: 10, sum: 1, bounds: []float64{0.001, 0.002}, cum: []uint64{5, 8}}
	if got := time.Duration(noInf.atMost(0.99)); got != 2*time.Millisecond {
		t.Errorf("p99 past the last bucket of a page without +Inf: at most %v, want 2 ms", got)
	}
}
