//go:build !unix

package cputime

import "time"

// Process is not measured on this platform; the benchmark then reports the
// overhead by wall time only.
func Process() time.Duration { return 0 }
