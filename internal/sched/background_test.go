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
	with.Alarm(time.Second, func() { order = append(order, "after") })
	plain.Alarm(time.Second, func() {})
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

// D1, L5: Background callbacks of one instant share their tie-break, so
// they run in the order they were scheduled: a total order on the events
// that no heap shape can change (the heap was binary, then 4-ary).
func TestD1_BackgroundCallbacksOfOneInstantRunInTheirOrder(t *testing.T) {
	k := newKernel(5)
	var order []int
	for i := range 40 {
		k.Background(time.Second+time.Duration(i%3)*time.Second, func() { order = append(order, i) })
	}
	_, err := k.Drive(4 * time.Second)
	assert.NoError(t, err)
	var want []int
	for r := range 3 {
		for i := range 40 {
			if i%3 == r {
				want = append(want, i)
			}
		}
	}
	assert.Equal(t, want, order)
	assert.NoError(t, k.Close())
}
