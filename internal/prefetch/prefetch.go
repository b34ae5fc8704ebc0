// Package prefetch asks the processor to start reading a value into its
// cache while other work goes on. A lookup in a table larger than the
// cache waits for memory; asking for the lines of the next few lookups
// first lets those waits overlap instead of adding up.
package prefetch

import "unsafe"

// Of asks for the cache line holding the start of *p. It is only a hint:
// it never faults, blocks or changes what a program observes, and where
// the architecture has no such hint it does nothing.
func Of[T any](p *T) { line(unsafe.Pointer(p)) }
