//go:build !unix

package pdfium

import "github.com/tetratelabs/wazero/experimental"

// memoryAllocator is wazero's own where there is no mmap: the memory is
// a Go slice, still capped at MemoryLimit.
var memoryAllocator experimental.MemoryAllocator

// releaseMemory has nothing to release: the collector frees the memory.
func releaseMemory() {}
