package sched

import (
	"context"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// H1, issue 14: a spawned task that calls runtime.Goexit is reported by
// its name, its Task is never reused (its goroutine is gone), and the
// spawned tasks after it run on Tasks of their own.
func TestH1_AGoexitedSpawnedTaskIsReportedAndNotReused(t *testing.T) {
	k := newKernel(2)
	defer k.Close()
	var tasks []*Task
	r := &funcRunner{name: "x", fn: func(ctx context.Context, num uint32) {
		tasks = append(tasks, FromContext(ctx))
		if num == 1 {
			goruntime.Goexit()
		}
	}}
	run(t, k, func(ctx context.Context) {
		k.Spawn(r, 1)
		require.NoError(t, FromContext(ctx).Sleep(ctx, time.Millisecond))
		k.Spawn(r, 2)
		k.Spawn(r, 3)
	})
	p := k.TakePanics()
	require.Len(t, p, 1)
	assert.True(t, p[0].Goexit)
	assert.Equal(t, "x 1", p[0].Task)
	require.Len(t, tasks, 3)
	assert.NotSame(t, tasks[0], tasks[1])
	assert.NotSame(t, tasks[0], tasks[2])
	assert.True(t, tasks[0].Finished())
}

// Issue 14: Spawn works from the driver before Run and from callbacks
// (After and Background), and a deadlock report names the spawned tasks
// that block, with their numbers, in start order.
func TestSpawnFromTheDriverAndCallbacksAndDeadlockNames(t *testing.T) {
	k := newKernel(4)
	defer k.Close()
	var ran []uint32
	var s Signal
	r := &funcRunner{name: "w", fn: func(ctx context.Context, num uint32) {
		ran = append(ran, num)
		if num%2 == 0 {
			s.Wait(ctx, FromContext(ctx), "waiting forever")
		}
	}}
	k.Spawn(r, 1) // the driver, before Run
	k.Spawn(r, 2)
	k.After(time.Millisecond, func() { k.Spawn(r, 3); k.Spawn(r, 4) })
	k.Background(0, func() { k.Spawn(r, 5); k.Spawn(r, 6) })
	stop, err := k.Drive(-1)
	require.NoError(t, err)
	assert.Equal(t, Deadlocked, stop)
	assert.ElementsMatch(t, []uint32{1, 2, 3, 4, 5, 6}, ran)
	assert.Equal(t, []string{"w 2: waiting forever", "w 6: waiting forever", "w 4: waiting forever"}, k.Blocked())
}
