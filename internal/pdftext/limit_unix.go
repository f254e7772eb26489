//go:build unix

package pdftext

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// limitMemory caps the process's address space at what it now uses plus
// more bytes: past it, an allocation fails and the process dies.
func limitMemory(more int64) {
	statm, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return
	}
	fields := strings.Fields(string(statm))
	if len(fields) == 0 {
		return
	}
	pages, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil {
		return
	}
	limit := uint64(pages*int64(os.Getpagesize()) + more)
	_ = syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit, Max: limit})
}
