package synthtest

import (
	"syscall"
	"time"
	"unsafe"
)

// clockThreadCPUTime is Linux's CLOCK_THREAD_CPUTIME_ID.
const clockThreadCPUTime = 3

// ThreadCPUTime returns the CPU time the calling OS thread has used, to
// the nanosecond. Benchmarks that lock their goroutine to its thread
// (runtime.LockOSThread) time a query by it, which on a machine shared
// with other work measures the query's cost rather than its wait for a
// core. It returns 0 where the clock cannot be read.
func ThreadCPUTime() time.Duration {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
