//go:build unix

// Package cputime reads the CPU time of this process, for benchmarks that
// report CPU rather than wall time (which grows when other processes
// compete for the machine).
package cputime

import (
	"syscall"
	"time"
)

// Process returns the CPU time this process has used (user + system), which
// includes the garbage collector's work and, unlike wall time, does not grow
// when other processes compete for the machine.
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
