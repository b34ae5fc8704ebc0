//go:build !linux

package synthtest

import "time"

// ThreadCPUTime returns 0: the per-thread CPU clock is read on Linux only.
func ThreadCPUTime() time.Duration { return 0 }

// ProcessCPUTime returns 0: the process CPU clock is read on Linux only.
func ProcessCPUTime() time.Duration { return 0 }
