package sched

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// L5: a Background callback draws no seeded tie-break, runs after the other
// events of its instant, and never moves time on by itself.
func TestL5_BackgroundLeavesTheSeededSequenceAlone(t *testing.T) {
	plain, with := newKernel(3), newKernel(3)
	var order []string
	with.Background(time.Second, func() { order = append(order, "background") })
	with.After(time.Second, false, func() { order = append(order, "after") })
	plain.After(time.Second, false, func() {})
	assert.Equal(t, plain.Rand().Uint64(), with.Rand().Uint64(), "the seeded sequence is unchanged")

	stop, err := with.Drive(-1)
	assert.NoError(t, err)
	assert.Equal(t, Drained, stop)
	assert.Zero(t, with.Now(), "a background event keeps no time moving")
	assert.Empty(t, order)
	_, err = with.Drive(2 * time.Second)
	assert.NoError(t, err)
	assert.Equal(t, []string{"after", "background"}, order, "it runs last in its instant")
	assert.NoError(t, with.Close())
	assert.NoError(t, plain.Close())
}
