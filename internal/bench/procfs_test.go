package bench

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// burn uses about d of CPU time, so that at least one clock tick is counted.
func burn(d time.Duration) {
	deadline := time.Now().Add(d)
	for n := 0; time.Now().Before(deadline); n++ {
		_ = n * n
	}
}

// TestReadProcSelf reads this very process, which has used CPU and memory.
func TestReadProcSelf(t *testing.T) {
	burn(50 * time.Millisecond)
	p, err := readProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if p.PPID != os.Getppid() {
		t.Errorf("ppid %d, want %d", p.PPID, os.Getppid())
	}
	if p.CPU <= 0 || p.RSS <= 0 || p.PeakRSS < p.RSS {
		t.Errorf("got %+v: want CPU > 0 and 0 < RSS ≤ PeakRSS", p)
	}
	if _, err := readProc(1 << 30); err == nil {
		t.Error("readProc of a process that does not exist: no error")
	}
}

// TestProcTree runs a child that burns CPU: the tree of this process must
// count the child's CPU besides its own, and once the child is waited for,
// its CPU moves to this process's ChildCPU.
func TestProcTree(t *testing.T) {
	child := exec.Command("sh", "-c", "while :; do :; done")
	if err := child.Start(); err != nil {
		t.Skipf("no shell to burn CPU in: %v", err)
	}
	waited := false
	defer func() {
		if !waited {
			_ = child.Process.Kill()
			_ = child.Wait()
		}
	}()
	const want = 300 * time.Millisecond
	var c proc
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		var err error
		if c, err = readProc(child.Process.Pid); err != nil {
			t.Fatal(err)
		}
		if c.CPU >= want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child used %v of CPU in a minute, want %v", c.CPU, want)
		}
	}
	self, err := readProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	tree, err := procTree(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Read after self and the child, the tree holds at least both.
	if floor := self.CPU + self.ChildCPU + c.CPU; tree < floor {
		t.Errorf("procTree = %v, want at least %v (own %v + exited children %v + the child %v)", tree, floor, self.CPU, self.ChildCPU, c.CPU)
	}
	_ = child.Process.Kill()
	_ = child.Wait()
	waited = true
	after, err := readProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after.ChildCPU < self.ChildCPU+c.CPU {
		t.Errorf("ChildCPU after waiting for the child = %v, want at least %v + %v", after.ChildCPU, self.ChildCPU, c.CPU)
	}
}

func TestReadSelf(t *testing.T) {
	before, err := readSelf()
	if err != nil {
		t.Fatal(err)
	}
	burn(50 * time.Millisecond)
	after, err := readSelf()
	if err != nil {
		t.Fatal(err)
	}
	if after.CPU <= before.CPU || after.PeakRSS <= 0 || after.PeakRSS < before.PeakRSS {
		t.Errorf("before %+v, after %+v: want CPU to grow and a peak RSS", before, after)
	}
}
