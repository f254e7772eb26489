//go:build !unix

package markdown

import "time"

// cpuTime is not measured on this platform; the benchmark then reports the
// overhead by wall time only.
func cpuTime() time.Duration { return 0 }
