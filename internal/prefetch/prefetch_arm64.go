//go:build arm64 && !purego

package prefetch

import "unsafe"

// line issues PRFM PLDL1KEEP for addr (prefetch_arm64.s).
//
//go:noescape
func line(addr unsafe.Pointer)
