//go:build !unix

package pdftext

// limitMemory does nothing where the address space cannot be capped.
func limitMemory(int64) {}
