package bench

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
	"unsafe"
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

// TestReadProcSystemTime checks that SysCPU is the kernel's part of CPU: a
// loop reading /dev/zero spends most of its time there (the kernel fills
// the buffer), a loop of arithmetic almost none.
func TestReadProcSystemTime(t *testing.T) {
	zero, err := os.Open("/dev/zero")
	if err != nil {
		t.Fatal(err)
	}
	defer zero.Close()
	b := make([]byte, 64<<10)
	// grown runs f until the process has used want of CPU (20 clock
	// ticks, so that the share is not decided by a few) and returns how
	// much CPU and SysCPU grew meanwhile.
	const want = 200 * time.Millisecond
	grown := func(f func()) (cpu, sys time.Duration) {
		before, err := readProc(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(time.Minute); ; {
			// /proc is read every 20 ms, its own cost small beside f's.
			for next := time.Now().Add(20 * time.Millisecond); time.Now().Before(next); {
				f()
			}
			after, err := readProc(os.Getpid())
			if err != nil {
				t.Fatal(err)
			}
			if after.SysCPU > after.CPU {
				t.Errorf("system time %v is more than the CPU time %v", after.SysCPU, after.CPU)
			}
			if cpu, sys = after.CPU-before.CPU, after.SysCPU-before.SysCPU; cpu >= want {
				t.Logf("%v of CPU, %v in the kernel", cpu, sys)
				return cpu, sys
			}
			if time.Now().After(deadline) {
				t.Fatalf("%v of CPU in a minute, want %v", cpu, want)
			}
		}
	}
	cpu, sys := grown(func() {
		// The system call itself: os.File.Read would have the race
		// detector, when on, account for the buffer in user time.
		for range 10 {
			if _, _, errno := syscall.Syscall(syscall.SYS_READ, zero.Fd(), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b))); errno != 0 {
				t.Fatal(errno)
			}
		}
	})
	if sys*2 < cpu {
		t.Errorf("reading /dev/zero: %v of CPU, %v of it in the kernel; want most of it", cpu, sys)
	}
	cpu, sys = grown(func() { burn(time.Millisecond) })
	if sys*2 > cpu {
		t.Errorf("arithmetic: %v of CPU, %v of it in the kernel; want little of it", cpu, sys)
	}
}
