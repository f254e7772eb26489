package bench

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The server's own histograms (its /metrics) that say where the time of a
// loaded run went, read before and after the load: how long the group
// commits took, and how long the server's goroutines waited, runnable, for
// a processor. An event's delivery waits for both, once or more: for the
// commit under way and its own, and for the committer, the follower and the
// agent to be scheduled.
const (
	commitMetric = "toolmark_persist_batch_seconds"
	schedMetric  = "go_sched_latencies_seconds"
)

// ServerStages is what the server's /metrics histograms tell of a run
// (the difference of two readings, before and after the load).
type ServerStages struct {
	Commits    HistFigure `json:"commits"`    // a group commit: the batch of statements to its end
	Scheduling HistFigure `json:"scheduling"` // a goroutine made runnable until it runs (the Go runtime's sample)
}

// HistFigure sums up a histogram's observations: their count and mean, and
// the upper bound of the bucket that holds each quantile. The servers'
// buckets are coarse (commits: doubling from 0.5 ms; scheduling: about
// ×11 from 64 ns), so a quantile is "at most" that bound.
type HistFigure struct {
	Count uint64   `json:"count"`
	Mean  Duration `json:"meanMs"`
	P50   Duration `json:"p50AtMostMs"`
	P99   Duration `json:"p99AtMostMs"`
}

// histogram is one reading of a cumulative histogram.
type histogram struct {
	count  uint64
	sum    float64   // seconds
	bounds []float64 // upper bounds in seconds, ascending; +Inf last when the page gives it
	cum    []uint64  // cumulative counts per bound
}

// since returns h minus an earlier reading of the same histogram, which
// must have the same buckets.
func (h histogram) since(old histogram) (histogram, error) {
	if !slices.Equal(h.bounds, old.bounds) {
		return histogram{}, fmt.Errorf("its buckets changed between readings")
	}
	if h.count < old.count {
		return histogram{}, fmt.Errorf("it counts fewer than before: the server restarted during the load")
	}
	d := histogram{count: h.count - old.count, sum: h.sum - old.sum, bounds: h.bounds, cum: make([]uint64, len(h.cum))}
	for i := range h.cum {
		d.cum[i] = h.cum[i] - old.cum[i]
	}
	return d, nil
}

// figure sums h up.
func (h histogram) figure() HistFigure {
	f := HistFigure{Count: h.count}
	if h.count == 0 {
		return f
	}
	f.Mean = Duration(h.sum / float64(h.count) * float64(time.Second))
	f.P50, f.P99 = h.atMost(0.5), h.atMost(0.99)
	return f
}

// atMost returns the upper bound of the bucket holding quantile q, or the
// highest finite bound when that bucket is the open one (+Inf, or past the
// last bucket a page left out).
func (h histogram) atMost(q float64) Duration {
	rank := uint64(math.Ceil(q * float64(h.count)))
	var bound float64
	for i, b := range h.bounds {
		if !math.IsInf(b, 1) {
			bound = b
		}
		if h.cum[i] >= rank {
			break
		}
	}
	return Duration(bound * float64(time.Second))
}

// stagesReading is one reading of the server's two histograms.
type stagesReading struct{ commits, sched histogram }

// readStages reads the server's /metrics at base.
func readStages(ctx context.Context, hc *http.Client, base string) (stagesReading, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return stagesReading{}, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return stagesReading{}, fmt.Errorf("reading the server's metrics: %w", unwrapURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return stagesReading{}, fmt.Errorf("reading the server's metrics: HTTP %d", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return stagesReading{}, fmt.Errorf("reading the server's metrics: %w", err)
	}
	var r stagesReading
	if r.commits, err = histogramOf(fams, commitMetric); err != nil {
		return r, err
	}
	r.sched, err = histogramOf(fams, schedMetric)
	return r, err
}

// histogramOf returns the histogram name of fams, which must be there with
// one series.
func histogramOf(fams map[string]*dto.MetricFamily, name string) (histogram, error) {
	f, ok := fams[name]
	if !ok || f.GetType() != dto.MetricType_HISTOGRAM || len(f.Metric) != 1 {
		return histogram{}, fmt.Errorf("reading the server's metrics: no histogram %s", name)
	}
	m := f.Metric[0].GetHistogram()
	h := histogram{count: m.GetSampleCount(), sum: m.GetSampleSum()}
	for _, b := range m.Bucket {
		h.bounds, h.cum = append(h.bounds, b.GetUpperBound()), append(h.cum, b.GetCumulativeCount())
	}
	return h, nil
}

// stagesSince returns the stages of a run from readings before and after.
func stagesSince(before, after stagesReading) (*ServerStages, error) {
	c, err := after.commits.since(before.commits)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", commitMetric, err)
	}
	s, err := after.sched.since(before.sched)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", schedMetric, err)
	}
	return &ServerStages{Commits: c.figure(), Scheduling: s.figure()}, nil
}

// fmtHist is a HistFigure for the text report.
func fmtHist(f HistFigure) string {
	return fmt.Sprintf("mean %s, p50 ≤ %s, p99 ≤ %s (n=%d)", fmtDur(time.Duration(f.Mean)), fmtDur(time.Duration(f.P50)), fmtDur(time.Duration(f.P99)), f.Count)
}
