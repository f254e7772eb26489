package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestDecided(t *testing.T) {
	for _, c := range []struct {
		passed     []bool
		repeat     int
		done, pass bool
	}{
		{[]bool{true}, 1, true, true},
		{[]bool{false}, 1, true, false},
		{[]bool{true}, 3, false, false},
		{[]bool{true, true}, 3, true, true},
		{[]bool{false, false}, 3, true, false},
		{[]bool{true, false}, 3, false, false},
		{[]bool{true, false, true}, 3, true, true},
		{[]bool{false, true, false}, 3, true, false},
		{[]bool{true, false}, 2, true, false}, // a tie fails
		{[]bool{true, true, false}, 5, false, false},
		{[]bool{true, true, false, true}, 5, true, true},
	} {
		done, pass := decided(c.passed, c.repeat)
		if done != c.done || pass != c.pass {
			t.Errorf("decided(%v, %d) = %v, %v; want %v, %v", c.passed, c.repeat, done, pass, c.done, c.pass)
		}
	}
}

func TestClearly(t *testing.T) {
	const target = 50 * time.Millisecond
	run := func(p99 time.Duration, gaps int) *Report {
		r := &Report{Gaps: gaps}
		r.Delivery.N, r.Delivery.P99 = 100, p99
		return r
	}
	for _, c := range []struct {
		r     *Report
		err   error
		clear bool
	}{
		{run(25*time.Millisecond, 0), nil, true},
		{run(26*time.Millisecond, 0), nil, false},
		{run(50*time.Millisecond, 0), nil, false},
		{run(100*time.Millisecond, 0), nil, false},
		{run(101*time.Millisecond, 0), nil, true},
		{run(40*time.Millisecond, 1), nil, true},                   // a gap fails the step at once
		{run(40*time.Millisecond, 0), fmt.Errorf("stopped"), true}, // so does an error
		{&Report{}, nil, true},                                     // and a run that delivered nothing
	} {
		if got := clearly(c.r, c.err, target); got != c.clear {
			t.Errorf("p99 %v, gaps %d, err %v: clearly = %v, want %v", c.r.Delivery.P99, c.r.Gaps, c.err, got, c.clear)
		}
	}
}

func TestMedianRun(t *testing.T) {
	steps := make([]*Report, 5)
	for i, ms := range []int{40, 55, 30, 48, 61} {
		steps[i] = &Report{}
		steps[i].Delivery.P99 = time.Duration(ms) * time.Millisecond
	}
	for _, c := range []struct {
		runs []int
		want int
	}{
		{[]int{0}, 0},
		{[]int{0, 1, 2}, 0},    // 30, 40, 55: 40
		{[]int{1, 3}, 1},       // 48, 55: the higher
		{[]int{1, 2, 3, 4}, 1}, // 30, 48, 55, 61: 55
	} {
		if got := medianRun(steps, c.runs); got != c.want {
			t.Errorf("medianRun(%v) = %d, want %d", c.runs, got, c.want)
		}
	}
}

// TestCapacityTable: a run's row gives its commits' mean when the server's
// /metrics were read, and n/a when they were not.
func TestCapacityTable(t *testing.T) {
	read, unread := fullReport(100, 10*time.Millisecond), fullReport(100, 10*time.Millisecond)
	read.Stages = &ServerStages{Commits: HistFigure{Count: 10, Mean: Duration(3 * time.Millisecond)}}
	c := &CapacityReport{Steps: []*Report{read, unread}, Searched: []CapacityStep{{Concurrency: 100, Runs: []int{0, 1}, Median: 0}}}
	lines := strings.Split(strings.TrimSpace(c.Table()), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d lines, want a header, a rule and 2 rows:\n%s", len(lines), c.Table())
	}
	for i, want := range []string{"| 0 / 0 / 0 | 3.00 ms |", "| 0 / 0 / 0 | n/a |"} {
		if !strings.Contains(lines[2+i], want) {
			t.Errorf("row %d lacks %q: %s", i, want, lines[2+i])
		}
		if strings.Count(lines[2+i], "|") != strings.Count(lines[0], "|") {
			t.Errorf("row %d has other cells than the header:\n%s\n%s", i, lines[0], lines[2+i])
		}
	}
}
