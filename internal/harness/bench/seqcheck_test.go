package bench

import "testing"

func TestSeqCheck(t *testing.T) {
	tests := []struct {
		name       string
		seqs       []int64 // a negative number is a snapshot at -n
		gaps       int
		missing    int64
		duplicates int
		last       int64
	}{
		{"in order", []int64{1, 2, 3, 4}, 0, 0, 0, 4},
		{"nothing", nil, 0, 0, 0, 0},
		{"late start", []int64{3, 4}, 1, 2, 0, 4},
		{"one gap", []int64{1, 2, 5, 6}, 1, 2, 0, 6},
		{"two gaps", []int64{1, 3, 4, 7}, 2, 3, 0, 7},
		{"repeat", []int64{1, 2, 2, 3}, 0, 0, 1, 3},
		{"replay from the start", []int64{1, 2, 3, 1, 2, 3, 4}, 0, 0, 3, 4},
		{"back then forward", []int64{1, 2, 3, 2, 4}, 0, 0, 1, 4},
		{"gap then the missing one late", []int64{1, 3, 2, 4}, 1, 1, 1, 4},
		{"snapshot then on", []int64{-5, 6, 7}, 0, 0, 0, 7},
		{"snapshot going back", []int64{1, 2, 3, -2, 4}, 0, 0, 1, 4},
		{"gap after a snapshot", []int64{-5, 7}, 1, 1, 0, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c SeqCheck
			for _, s := range tt.seqs {
				if s < 0 {
					c.Snapshot(-s)
				} else {
					c.Observe(s)
				}
			}
			if c.Gaps != tt.gaps || c.Missing != tt.missing || c.Duplicates != tt.duplicates || c.Last() != tt.last {
				t.Errorf("got gaps %d, missing %d, duplicates %d, last %d; want %d, %d, %d, %d",
					c.Gaps, c.Missing, c.Duplicates, c.Last(), tt.gaps, tt.missing, tt.duplicates, tt.last)
			}
		})
	}
}
