package bench

import (
	"encoding/binary"
	"os"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name string
		line string
		want proc
	}{
		{"plain", "4242 (toolmark) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 75 3 2 20 0 12 0 987654 1234567 890 18446744073709551615\n",
			proc{PID: 4242, PPID: 1, CPU: 3250 * time.Millisecond, ChildCPU: 50 * time.Millisecond}},
		{"name with spaces and parentheses", "77 (a (b) c) R 9 77 77 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 5 6 7",
			proc{PID: 77, PPID: 9, CPU: 30 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.line), 10*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	for _, bad := range []string{"", "12 toolmark S 1", "12 (x) S 1 2 3", "12 (x) S 1 2 3 4 5 6 7 8 9 10 x 12 13 14 15"} {
		if _, err := parseStat([]byte(bad), time.Millisecond); err == nil {
			t.Errorf("parseStat(%q): no error", bad)
		}
	}
}

func TestParseStatus(t *testing.T) {
	const status = "Name:\ttoolmark\nState:\tS (sleeping)\nVmPeak:\t 1300000 kB\nVmHWM:\t   71168 kB\nVmRSS:\t   65536 kB\nThreads:\t9\n"
	rss, hwm, err := parseStatus([]byte(status))
	if err != nil {
		t.Fatal(err)
	}
	if rss != 64<<20 || hwm != 69.5*(1<<20) {
		t.Errorf("got rss %d, hwm %d; want %d, %d", rss, hwm, 64<<20, int64(69.5*(1<<20)))
	}
	// A zombie has neither line.
	if rss, hwm, err := parseStatus([]byte("Name:\tx\nState:\tZ (zombie)\n")); err != nil || rss != 0 || hwm != 0 {
		t.Errorf("zombie: got %d, %d, %v", rss, hwm, err)
	}
	if _, _, err := parseStatus([]byte("VmRSS:\t12 MB\n")); err == nil {
		t.Error("an unknown unit: no error")
	}
}

func TestAuxvValue(t *testing.T) {
	var b []byte
	for _, kv := range [][2]uint64{{6, 4096}, {17, 250}, {0, 0}, {17, 1}} {
		b = binary.NativeEndian.AppendUint64(b, kv[0])
		b = binary.NativeEndian.AppendUint64(b, kv[1])
	}
	if got := auxvValue(b, 17); got != 250 {
		t.Errorf("AT_CLKTCK = %d, want 250", got)
	}
	if got := auxvValue(b, 99); got != 0 {
		t.Errorf("absent key = %d, want 0", got)
	}
}

// TestReadProcSelf reads this very process, which has used CPU and memory.
func TestReadProcSelf(t *testing.T) {
	// Burn a little CPU so that at least one clock tick is counted.
	deadline := time.Now().Add(50 * time.Millisecond)
	for n := 0; time.Now().Before(deadline); n++ {
		_ = n * n
	}
	p, err := readProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if p.PID != os.Getpid() || p.PPID != os.Getppid() {
		t.Errorf("pid %d, ppid %d; want %d, %d", p.PID, p.PPID, os.Getpid(), os.Getppid())
	}
	if p.CPU <= 0 || p.RSS <= 0 || p.PeakRSS < p.RSS {
		t.Errorf("got %+v: want CPU > 0 and 0 < RSS ≤ PeakRSS", p)
	}
	if tree, err := procTree(os.Getpid()); err != nil || tree < p.CPU {
		t.Errorf("ProcTree = %v, %v; want at least the process's own %v", tree, err, p.CPU)
	}
	if _, err := readProc(1 << 30); err == nil {
		t.Error("readProc of a process that does not exist: no error")
	}
}
