//go:build !unix

package explore_test

import "time"

var processStart = time.Now()

// cpuTime is, where the process's CPU time cannot be read, the wall time
// since the test binary started: on one worker, an upper bound of it.
func cpuTime() time.Duration { return time.Since(processStart) }
