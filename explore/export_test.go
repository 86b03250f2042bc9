package explore

import "time"

// SetClock replaces the wall clock shrinking reads to stop, for tests.
func SetClock(e *Explorer, now func() time.Time) { e.now = now }

// SetMaxVerdicts bounds the models' memo of porcupine's verdicts (0 turns
// it off) until the returned function restores it.
func SetMaxVerdicts(n int) (restore func()) {
	old := maxVerdicts
	maxVerdicts = n
	return func() { maxVerdicts = old }
}

// SetMaxSteps bounds each model's memo of steps until the returned
// function restores it.
func SetMaxSteps(n int) (restore func()) {
	old := maxSteps
	maxSteps = n
	return func() { maxSteps = old }
}
