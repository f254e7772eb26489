//go:build unix

package toolcallmarkup

import "syscall"

// cpuTime returns the CPU time the process has used, in nanoseconds: a
// measure of cost that, unlike wall time, does not grow when other
// processes compete for the CPUs.
func cpuTime() (int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}
