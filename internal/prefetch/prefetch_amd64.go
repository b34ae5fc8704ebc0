//go:build amd64 && !purego

package prefetch

import "unsafe"

// line issues PREFETCHT0 for addr (prefetch_amd64.s).
//
//go:noescape
func line(addr unsafe.Pointer)
