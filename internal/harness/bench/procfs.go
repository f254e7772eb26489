package bench

import (
	"fmt"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// userHZ is the clock tick /proc counts CPU time in on every Linux
// architecture Go supports (procfs assumes the same).
const userHZ = 100

// proc is what Linux's /proc tells of a process at one moment.
type proc struct {
	PPID int
	// CPU is the process's user plus system time (utime + stime), and
	// SysCPU the part of it in the kernel (stime).
	CPU, SysCPU time.Duration
	// ChildCPU is the CPU time of its children that have exited and been
	// waited for (cutime + cstime).
	ChildCPU time.Duration
	// RSS is the resident set size now (VmRSS) and PeakRSS its high-water
	// mark over the process's life (VmHWM), in bytes.
	RSS, PeakRSS int64
}

// ticks converts a count of clock ticks to a duration.
func ticks(n int) time.Duration { return time.Duration(n) * time.Second / userHZ }

// readProc reads /proc/PID/stat and /proc/PID/status.
func readProc(pid int) (proc, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return proc{}, fmt.Errorf("reading process %d: %w", pid, err)
	}
	st, err := p.Stat()
	if err != nil {
		return proc{}, fmt.Errorf("reading the CPU time of process %d: %w", pid, err)
	}
	status, err := p.NewStatus()
	if err != nil {
		return proc{}, fmt.Errorf("reading the memory of process %d: %w", pid, err)
	}
	return proc{
		PPID:     st.PPID,
		CPU:      ticks(int(st.UTime + st.STime)),
		SysCPU:   ticks(int(st.STime)),
		ChildCPU: ticks(st.CUTime + st.CSTime),
		RSS:      int64(status.VmRSS),
		PeakRSS:  int64(status.VmHWM),
	}, nil
}

// procTree returns the CPU time of a process and its descendants: its own
// CPU and that of its exited children, plus the CPU of the children alive
// now (found by their parent pid in /proc). For a PostgreSQL postmaster it
// is the CPU of the whole server, backends included.
func procTree(pid int) (time.Duration, error) {
	root, err := readProc(pid)
	if err != nil {
		return 0, err
	}
	total := root.CPU + root.ChildCPU
	all, err := procfs.AllProcs()
	if err != nil {
		return 0, fmt.Errorf("listing processes: %w", err)
	}
	for _, p := range all {
		if p.PID == pid {
			continue
		}
		st, err := p.Stat()
		if err != nil {
			continue // gone meanwhile
		}
		if st.PPID == pid {
			total += ticks(int(st.UTime+st.STime) + st.CUTime + st.CSTime)
		}
	}
	return total, nil
}

// selfUsage is the bench's own cost so far: its CPU time (user + system)
// and its peak RSS, from getrusage(2).
type selfUsage struct {
	CPU     time.Duration
	PeakRSS int64
}

func readSelf() (selfUsage, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return selfUsage{}, fmt.Errorf("reading the bench's own usage: %w", err)
	}
	return selfUsage{
		CPU:     time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		PeakRSS: ru.Maxrss << 10, // kilobytes on Linux
	}, nil
}
