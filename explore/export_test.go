package explore

import (
	"bytes"
	"encoding/json"
	"time"
)

// SetClock replaces the wall clock shrinking reads to stop, for tests.
func SetClock(e *Explorer, now func() time.Time) { e.now = now }

// SetMaxVerdicts bounds e's models' memo of porcupine's verdicts (0 turns
// it off), before a sweep.
func SetMaxVerdicts(e *Explorer, n int) { e.models.maxVerdicts = n }

// SetMaxSteps bounds each of e's models' memo of steps, before a sweep.
func SetMaxSteps(e *Explorer, n int) { e.models.maxSteps = n }

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
