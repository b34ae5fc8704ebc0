//go:build !(amd64 || arm64) || purego

package prefetch

import "unsafe"

// line does nothing: this architecture, or a purego build, has no hint.
func line(unsafe.Pointer) {}
