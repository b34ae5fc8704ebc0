//go:build !linux

package synthtest

import "time"

// ThreadCPUTime returns 0: the per-thread CPU clock is read on Linux only.
func ThreadCPUTime() time.Duration { return 0 }
