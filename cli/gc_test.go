package cli

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

// gcPercent reads the collector's GOGC.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// Main's collector budget applies while it runs and goes after; a GOGC
// the user set wins.
func TestCollectorBudgetYieldsToTheUsersGOGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	unset := func(string) string { return "" }
	undo := collectorBudget{percent: 400}.apply(unset)
	assert.Equal(t, 400, gcPercent(), "applied")
	undo()
	assert.Equal(t, 100, gcPercent(), "put back")
	undo = collectorBudget{percent: 400}.apply(func(k string) string {
		if k == "GOGC" {
			return "50"
		}
		return ""
	})
	assert.Equal(t, 100, gcPercent(), "the user's GOGC wins")
	undo()
	assert.Equal(t, 100, gcPercent())
}
