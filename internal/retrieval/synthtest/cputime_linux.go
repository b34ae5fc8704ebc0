package synthtest

import (
	"syscall"
	"time"
	"unsafe"
)

// Linux's CLOCK_PROCESS_CPUTIME_ID and CLOCK_THREAD_CPUTIME_ID.
const (
	clockProcessCPUTime = 2
	clockThreadCPUTime  = 3
)

// ThreadCPUTime returns the CPU time the calling OS thread has used, to
// the nanosecond. Benchmarks that lock their goroutine to its thread
// (runtime.LockOSThread) time a query by it, which on a machine shared
// with other work measures the query's cost rather than its wait for a
// core. It returns 0 where the clock cannot be read.
func ThreadCPUTime() time.Duration { return cpuClock(clockThreadCPUTime) }

// ProcessCPUTime returns the CPU time every thread of the process has
// used, to the nanosecond: the cost of work that may run on goroutines of
// its own. It returns 0 where the clock cannot be read.
func ProcessCPUTime() time.Duration { return cpuClock(clockProcessCPUTime) }

// cpuClock reads one of Linux's CPU-time clocks, 0 on failure.
func cpuClock(id uintptr) time.Duration {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, id, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
