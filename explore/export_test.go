package explore

import (
	"bytes"
	"encoding/json"
	"time"
)

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

// Reseal gives a summary's JSON, edited by a test into another consistent
// summary, the fingerprint of its new fields, as dosim explore --json
// would have written it.
func Reseal(data []byte) []byte {
	var s Summary
	if err := json.Unmarshal(data, &s); err != nil {
		panic(err)
	}
	s.seal()
	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil {
		panic(err)
	}
	return b.Bytes()
}
