package bench_test

import (
	"fmt"
	"time"

	"github.com/toolmark/toolmark/internal/harness/bench"
)

func ExampleSummarize() {
	var ds []time.Duration
	for i := 1; i <= 200; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	s := bench.Summarize(ds)
	fmt.Println(s.N, s.P50, s.P95, s.P99, s.Max)
	// Output:
	// 200 100ms 190ms 198ms 200ms
}

func ExampleSeqCheck() {
	var c bench.SeqCheck
	for _, seq := range []int64{1, 2, 4, 4, 5} {
		c.Observe(seq)
	}
	fmt.Printf("gaps %d (missing %d), duplicates %d, resume after %d\n", c.Gaps, c.Missing, c.Duplicates, c.Last())
	// Output:
	// gaps 1 (missing 1), duplicates 1, resume after 5
}
