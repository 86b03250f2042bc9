package sched

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// H1: virtual time ends at End (about 292 years). A sleep that would pass
// it used to wrap around and return at once, without the clock moving; now
// it never ends, and a driver call left with nothing but such waits stops
// with OutOfTime. A sleep that ends on the last instant still ends there.
func TestH1_ASleepPastTheEndOfTimeNeverEnds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first time.Duration // slept first
		then  time.Duration // past the end from there
		at    time.Duration // where the clock stops
	}{
		{"math.MaxInt64 after a second", time.Second, math.MaxInt64, time.Second},
		{"exactly to the end", time.Second, End - time.Second, time.Second},
		{"one past the last instant", End - 1, 1, End - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKernel(1)
			defer k.Close()
			woke := false
			stop := run(t, k, func(ctx context.Context) {
				me := FromContext(ctx)
				require.NoError(t, me.Sleep(ctx, tc.first))
				_ = me.Sleep(ctx, tc.then)
				woke = true
			})
			assert.Equal(t, OutOfTime, stop)
			assert.False(t, woke, "a sleep past the end never ends")
			assert.Equal(t, tc.at, k.Now())
			assert.Equal(t, []string{"root: sleeping (until past the end of virtual time)"}, k.Blocked())
		})
	}
}

// H1: a loop of long sleeps used to freeze the clock once it wrapped past
// about 292 years, and then spin for ever, unseen by the watchdog. Every
// sleep moves the clock by what it asked until the end, where the loop
// stops. The loop is bounded so that the old behaviour ends too.
func TestH1_ASleepLoopStopsAtTheEndOfTime(t *testing.T) {
	k := newKernel(1)
	defer k.Close()
	const step = 1000 * time.Hour
	slept, frozen := 0, 0
	stop := run(t, k, func(ctx context.Context) {
		me := FromContext(ctx)
		for range 3000 { // 2562 steps reach the end
			before := k.Now()
			require.NoError(t, me.Sleep(ctx, step))
			if k.Now() != before+step {
				frozen++
			}
			slept++
		}
	})
	assert.Equal(t, OutOfTime, stop)
	assert.Zero(t, frozen, "every sleep that returned moved the clock by its length")
	assert.Equal(t, int(End/step), slept)
	assert.Equal(t, time.Duration(slept)*step, k.Now())
}

// H1: a timer or a background callback past the end never fires (they
// used to fire at once); one that something waits for stops the driver
// call with OutOfTime, and once stopped it keeps nothing going.
func TestH1_TimersPastTheEndNeverFire(t *testing.T) {
	k := newKernel(1)
	defer k.Close()
	fired := 0
	stop := run(t, k, func(ctx context.Context) {
		k.Alarm(math.MaxInt64, func() { fired++ })
		k.Background(math.MaxInt64, func() { fired++ })
		tm := k.After(math.MaxInt64, func() { fired++ })
		assert.True(t, tm.Stop())
		require.NoError(t, FromContext(ctx).Sleep(ctx, time.Hour))
	})
	assert.Equal(t, Drained, stop, "a stopped timer past the end keeps nothing going")
	assert.Zero(t, fired)
	assert.Equal(t, time.Hour, k.Now())

	var reply Signal
	stop = run(t, k, func(ctx context.Context) {
		k.After(math.MaxInt64, func() { reply.Fire(k) }) // a link delay past the end
		reply.Wait(ctx, FromContext(ctx), "waiting for a reply")
	})
	assert.Equal(t, OutOfTime, stop)
	assert.False(t, reply.Fired())
	assert.Equal(t, time.Hour, k.Now())
	assert.Equal(t, []string{"root: waiting for a reply"}, k.Blocked())
}

// H1: AddTime saturates at End.
func TestH1_AddTimeSaturates(t *testing.T) {
	assert.Equal(t, 3*time.Second, AddTime(time.Second, 2*time.Second))
	assert.Equal(t, End-1, AddTime(End-2, 1))
	assert.Equal(t, End, AddTime(End-1, 1))
	assert.Equal(t, End, AddTime(time.Second, math.MaxInt64))
	assert.Equal(t, End, AddTime(End, time.Second))
	assert.Equal(t, time.Second, AddTime(time.Second, -time.Hour), "a negative duration adds nothing")
}

// H1: Drive refuses a target at or past the end of time.
func TestH1_DriveRefusesATargetPastTheEnd(t *testing.T) {
	k := newKernel(1)
	defer k.Close()
	_, err := k.Drive(End)
	require.ErrorIs(t, err, ErrClockStuck)
	stop, err := k.Drive(End - 1)
	require.NoError(t, err)
	assert.Equal(t, ReachedTarget, stop)
	assert.Equal(t, End-1, k.Now())
}

// H1: Abort ends the driver call at the next switch, before anything else
// due at the instant runs; the next driver call goes on from there.
func TestH1_AbortEndsTheDriverCallAtTheNextSwitch(t *testing.T) {
	k := newKernel(1)
	defer k.Close()
	var order []string
	stop := run(t, k, func(ctx context.Context) {
		k.Go(ctx, "other", func(ctx context.Context) { order = append(order, "other") })
		k.Abort()
		k.Abort() // once is enough
		order = append(order, "root before")
		require.NoError(t, FromContext(ctx).Sleep(ctx, 0))
		order = append(order, "root after")
	})
	assert.Equal(t, Aborted, stop)
	assert.Equal(t, []string{"root before"}, order)
	stop, err := k.Drive(-1)
	require.NoError(t, err)
	assert.Equal(t, Drained, stop)
	assert.ElementsMatch(t, []string{"root before", "root after", "other"}, order)
}
