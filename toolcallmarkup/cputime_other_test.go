//go:build !unix

package toolcallmarkup

// cpuTime is not available here; benchmarks then report wall time only.
func cpuTime() (int64, bool) { return 0, false }
