package bench

import (
	"encoding/json"
	"testing"
	"time"
)

func durations(ms ...int) []time.Duration {
	out := make([]time.Duration, len(ms))
	for i, m := range ms {
		out[i] = time.Duration(m) * time.Millisecond
	}
	return out
}

func TestSummarize(t *testing.T) {
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // 100 … 1, unsorted
	}
	tests := []struct {
		name string
		in   []time.Duration
		want Summary
	}{
		{"empty", nil, Summary{}},
		{"one", durations(7), Summary{N: 1, Mean: 7 * time.Millisecond, P50: 7 * time.Millisecond,
			P95: 7 * time.Millisecond, P99: 7 * time.Millisecond, Max: 7 * time.Millisecond}},
		{"two", durations(10, 20), Summary{N: 2, Mean: 15 * time.Millisecond, P50: 10 * time.Millisecond,
			P95: 20 * time.Millisecond, P99: 20 * time.Millisecond, Max: 20 * time.Millisecond}},
		{"1 to 100", durations(hundred...), Summary{N: 100, Mean: 50500 * time.Microsecond, P50: 50 * time.Millisecond,
			P95: 95 * time.Millisecond, P99: 99 * time.Millisecond, Max: 100 * time.Millisecond}},
		{"one slow outlier in 1000", append(durations(make([]int, 999)...), time.Second), Summary{N: 1000, Mean: time.Millisecond,
			Max: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]time.Duration(nil), tt.in...)
			if got := Summarize(tt.in); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			for i := range in {
				if in[i] != tt.in[i] {
					t.Fatalf("Summarize changed its input at %d", i)
				}
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	s := durations(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	tests := []struct {
		q    float64
		want time.Duration
	}{
		{0.001, time.Millisecond}, {0.1, time.Millisecond}, {0.11, 2 * time.Millisecond},
		{0.5, 5 * time.Millisecond}, {0.95, 10 * time.Millisecond}, {1, 10 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := Percentile(s, tt.q); got != tt.want {
			t.Errorf("Percentile(1…10 ms, %v) = %v, want %v", tt.q, got, tt.want)
		}
	}
	if got := Percentile(nil, 0.5); got != 0 {
		t.Errorf("Percentile(nil) = %v, want 0", got)
	}
}

func TestSummaryJSON(t *testing.T) {
	s := Summarize(durations(1, 2, 3))
	s.P95 += 1500 * time.Nanosecond // below the microsecond: rounded away
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"n":3,"meanMs":2,"p50Ms":2,"p95Ms":3.002,"p99Ms":3,"maxMs":3}`
	if string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.P95 != 3002*time.Microsecond || back.N != 3 || back.Max != 3*time.Millisecond {
		t.Errorf("round trip gave %+v", back)
	}
}
