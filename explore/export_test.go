package explore

import "time"

// SetClock replaces the wall clock shrinking reads to stop, for tests.
func SetClock(e *Explorer, now func() time.Time) { e.now = now }
