package bench

import (
	"encoding/json"
	"math"
	"slices"
	"time"
)

// Summary is the distribution of a set of durations: its size, mean,
// nearest-rank percentiles and maximum.
type Summary struct {
	N    int
	Mean time.Duration
	P50  time.Duration
	P95  time.Duration
	P99  time.Duration
	Max  time.Duration
}

// Summarize returns the Summary of ds; ds is not changed. The percentiles
// are nearest-rank: P99 of 100 values is the 99th smallest.
func Summarize(ds []time.Duration) Summary {
	if len(ds) == 0 {
		return Summary{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum float64
	for _, d := range s {
		sum += float64(d)
	}
	return Summary{
		N:    len(s),
		Mean: time.Duration(sum / float64(len(s))),
		P50:  Percentile(s, 0.50),
		P95:  Percentile(s, 0.95),
		P99:  Percentile(s, 0.99),
		Max:  s[len(s)-1],
	}
}

// Percentile returns the nearest-rank q-quantile (0 < q ≤ 1) of sorted, a
// slice in ascending order: the smallest value with at least q of the
// values at or below it. It returns 0 for an empty slice.
func Percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(q * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// MarshalJSON writes the durations as milliseconds (see Duration).
func (s Summary) MarshalJSON() ([]byte, error) {
	return json.Marshal(summaryJSON{s.N, Duration(s.Mean), Duration(s.P50), Duration(s.P95), Duration(s.P99), Duration(s.Max)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Summary) UnmarshalJSON(b []byte) error {
	var j summaryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = Summary{j.N, time.Duration(j.Mean), time.Duration(j.P50), time.Duration(j.P95), time.Duration(j.P99), time.Duration(j.Max)}
	return nil
}

type summaryJSON struct {
	N    int      `json:"n"`
	Mean Duration `json:"meanMs"`
	P50  Duration `json:"p50Ms"`
	P95  Duration `json:"p95Ms"`
	P99  Duration `json:"p99Ms"`
	Max  Duration `json:"maxMs"`
}

// ratio is a/b, or 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
