//go:build unix

package markdown

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time this process has used (user + system), which
// includes the garbage collector's work and, unlike wall time, does not grow
// when other processes compete for the machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
