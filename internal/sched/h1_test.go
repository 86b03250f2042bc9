package sched

import (
	"context"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// H1: Block for a task that does not hold the processor (a goroutine
// outside the simulation) does not touch the kernel: it returns
// WokenOutside, and the run goes on as if nothing happened.
func TestH1_BlockFromOutsideTheRunningTask(t *testing.T) {
	k := newKernel(1)
	defer k.Close()
	var other *Task
	var outside Wake
	var sleepErr, enterErr error
	stop := run(t, k, func(ctx context.Context) {
		other = k.Go(ctx, "other", func(ctx context.Context) {
			_ = FromContext(ctx).Sleep(ctx, time.Second)
		})
		outside = other.Block(ctx, "not mine") // other is not running
		sleepErr = other.Sleep(ctx, time.Second)
		_, enterErr = k.Enter(other.Context()) // other has not finished, but check a finished one below
	})
	assert.Equal(t, Drained, stop)
	assert.Equal(t, WokenOutside, outside)
	assert.ErrorIs(t, sleepErr, ErrNotInTask)
	assert.NoError(t, enterErr)
	assert.Equal(t, time.Second, k.Now(), "the other task slept once")
	_, err := k.Enter(other.Context())
	assert.ErrorIs(t, err, ErrNotInTask, "its task has finished")
}

// H1: a task that calls runtime.Goexit fails the run like a panic instead
// of leaving the driver waiting forever.
func TestH1_GoexitEndsTheTask(t *testing.T) {
	k := newKernel(1)
	var after bool
	stop := run(t, k, func(ctx context.Context) {
		k.Go(ctx, "quitter", func(ctx context.Context) { goruntime.Goexit() })
		require.NoError(t, FromContext(ctx).Sleep(ctx, time.Second))
		after = true
	})
	assert.Equal(t, Drained, stop)
	assert.True(t, after, "the other tasks go on")
	p := k.TakePanics()
	require.Len(t, p, 1)
	assert.True(t, p[0].Goexit)
	assert.Equal(t, "quitter", p[0].Task)
	require.NoError(t, k.Close())
}

// H1: a task blocked outside the simulation stops Drive with a
// *Stall once the stall limit passes; Close then ends the others.
func TestH1_StallStopsDrive(t *testing.T) {
	k := newKernel(1)
	require.NoError(t, k.SetStallLimit(MinStallLimit))
	never := make(chan struct{})
	k.Go(context.Background(), "parked", func(ctx context.Context) {
		_ = FromContext(ctx).Sleep(ctx, time.Hour)
	})
	k.Go(context.Background(), "stuck", func(ctx context.Context) { <-never })
	stop, err := k.Drive(-1)
	assert.Equal(t, Stalled, stop)
	require.ErrorIs(t, err, ErrStalled)
	var se *Stall
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "stuck", se.Task)
	_, err = k.Drive(-1)
	assert.ErrorIs(t, err, ErrStalled, "only Close works now")
	require.NoError(t, k.Close())
	close(never) // the stuck goroutine ends without touching the kernel (goleak checks)
}

// H1: the watchdog reads the stalled task and the clock without a data
// race (go test -race checks it). Here the task first runs after the clock
// moved, started by a timer while the root sleeps, and blocks outside the
// simulation: the goroutine that handed it the processor wrote its worker,
// the live list and the clock after the watchdog's counter last moved, and
// the driver read them when it declared the stall.
func TestH1_TheWatchdogReadsAStalledTaskWithoutARace(t *testing.T) {
	k := newKernel(1)
	require.NoError(t, k.SetStallLimit(MinStallLimit))
	never := make(chan struct{})
	k.Go(context.Background(), "root", func(ctx context.Context) {
		k.Alarm(time.Second, func() {
			k.Go(context.Background(), "late", func(ctx context.Context) { <-never })
		})
		_ = FromContext(ctx).Sleep(ctx, time.Hour)
	})
	stop, err := k.Drive(-1)
	assert.Equal(t, Stalled, stop)
	var se *Stall
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "late", se.Task)
	assert.Equal(t, time.Second, se.Now)
	require.NoError(t, k.Close())
	close(never)
}

// H1: the stall limit has a floor, MinStallLimit: below it a busy machine
// (a collection, a descheduled process) trips the watchdog on honest work,
// and a seed fails or passes by the machine's load. A limit below the
// floor is refused and the limit stays as it was; 0 or less turns the
// watchdog off.
func TestH1_TheStallLimitHasAFloor(t *testing.T) {
	k := newKernel(1)
	defer k.Close()
	for _, d := range []time.Duration{time.Nanosecond, time.Millisecond, MinStallLimit - 1} {
		err := k.SetStallLimit(d)
		require.ErrorIs(t, err, ErrStallLimit, "%v", d)
		assert.Contains(t, err.Error(), d.String())
		assert.Contains(t, err.Error(), "at least 100ms")
		assert.Contains(t, err.Error(), "or 0 to turn the watchdog off")
		assert.Equal(t, DefaultStallLimit, k.StallLimit(), "a refused limit changes nothing")
	}
	for _, d := range []time.Duration{MinStallLimit, time.Minute, 0, -time.Second} {
		require.NoError(t, k.SetStallLimit(d))
		assert.Equal(t, d, k.StallLimit())
	}
}

// H1 (run with -race): the watchdog names the work a stalled task runs
// (Task.SetWork publishes it, as a switch publishes the task), and reads
// it without a race.
func TestH1_TheWatchdogNamesTheWorkOfAStalledTask(t *testing.T) {
	k := newKernel(1)
	require.NoError(t, k.SetStallLimit(MinStallLimit))
	never := make(chan struct{})
	k.Go(context.Background(), "turn", func(ctx context.Context) {
		FromContext(ctx).SetWork(&gateWork{name: "NS/obj.Method attempt 1", g: &Gate{}})
		<-never
	})
	stop, err := k.Drive(-1)
	assert.Equal(t, Stalled, stop)
	var se *Stall
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "turn NS/obj.Method attempt 1", se.Task)
	require.NoError(t, k.Close())
	close(never)
}
