package sched

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newKernel(seed uint64) *Kernel { return New(rand.New(rand.NewPCG(seed, seed))) }

// gateWork is a Work that holds g, as the runtime's object turn holds its
// input gate: a yielding wait releases g and takes it back.
type gateWork struct {
	name string
	g    *Gate
}

var _ Work = (*gateWork)(nil)

func (w *gateWork) String() string { return w.name }

func (w *gateWork) Leave(t *Task) bool {
	if w.g.Owner() != t {
		return false
	}
	w.g.Release()
	return true
}

func (w *gateWork) Return(t *Task) { w.g.Acquire(t, "waiting to re-enter its object") }

// run starts fn as the root task and drives the kernel until it stops.
func run(t *testing.T, k *Kernel, fn func(ctx context.Context)) Stop {
	t.Helper()
	k.Go(context.Background(), "root", fn)
	stop, err := k.Drive(-1)
	require.NoError(t, err)
	return stop
}

func TestSleepOrdersByVirtualTime(t *testing.T) {
	k := newKernel(1)
	defer k.Close()
	var order []string
	stop := run(t, k, func(ctx context.Context) {
		for _, d := range []time.Duration{3 * time.Second, time.Second, 2 * time.Second} {
			k.Go(ctx, d.String(), func(ctx context.Context) {
				require.NoError(t, FromContext(ctx).Sleep(ctx, d))
				order = append(order, fmt.Sprintf("%s@%s", d, k.Now()))
			})
		}
	})
	assert.Equal(t, Drained, stop)
	assert.Equal(t, []string{"1s@1s", "2s@2s", "3s@3s"}, order)
	assert.Equal(t, 3*time.Second, k.Now(), "virtual time jumps to the last event")
}

// tieOrder runs ten tasks ready at the same instant and returns the order
// they ran in.
func tieOrder(t *testing.T, seed uint64) string {
	k := newKernel(seed)
	defer k.Close()
	var order []string
	run(t, k, func(ctx context.Context) {
		for i := range 10 {
			k.Go(ctx, fmt.Sprint(i), func(ctx context.Context) { order = append(order, fmt.Sprint(i)) })
		}
	})
	return strings.Join(order, ",")
}

// D1: ties are broken by the seed, so one seed gives one order.
func TestTieBreakIsSeededD1(t *testing.T) {
	first := tieOrder(t, 42)
	for range 5 {
		assert.Equal(t, first, tieOrder(t, 42), "same seed, same order")
	}
	orders := map[string]bool{}
	for seed := range uint64(20) {
		orders[tieOrder(t, seed)] = true
	}
	assert.Greater(t, len(orders), 10, "different seeds explore different interleavings")
}

func TestDeadlockNamesBlockedTasks(t *testing.T) {
	k := newKernel(1)
	defer k.Close()
	var never Signal
	stop := run(t, k, func(ctx context.Context) {
		k.Go(ctx, "waiter", func(ctx context.Context) {
			never.Wait(ctx, FromContext(ctx), "waiting for a signal nobody fires")
		})
	})
	require.Equal(t, Deadlocked, stop)
	assert.Equal(t, []string{"waiter: waiting for a signal nobody fires"}, k.Blocked())
}

func TestCloseEndsParkedGoroutines(t *testing.T) {
	k := newKernel(1)
	var gate Gate
	stop := run(t, k, func(ctx context.Context) {
		me := FromContext(ctx)
		gate.Acquire(me, "holding")
		for i := range 3 {
			k.Go(ctx, fmt.Sprint("blocked ", i), func(ctx context.Context) {
				gate.Acquire(FromContext(ctx), "waiting for the gate")
			})
		}
	})
	require.Equal(t, Deadlocked, stop)
	require.NoError(t, k.Close())
	require.NoError(t, k.Close(), "Close is safe to call twice")
	_, err := k.Drive(-1)
	assert.ErrorIs(t, err, ErrClosed)
	// goleak in TestMain fails the package if any goroutine survived.
}

func TestCancelWakesBlockedTask(t *testing.T) {
	k := newKernel(1)
	defer k.Close()
	var slept error
	var wokeAt time.Duration
	run(t, k, func(ctx context.Context) {
		cctx, cancel := context.WithCancel(ctx)
		k.Go(cctx, "sleeper", func(ctx context.Context) {
			slept = FromContext(ctx).Sleep(ctx, time.Hour)
			wokeAt = k.Now()
		})
		_ = FromContext(ctx).Sleep(ctx, time.Second)
		cancel()
	})
	assert.ErrorIs(t, slept, context.Canceled)
	assert.Equal(t, time.Second, wokeAt, "the sleep ends at the instant of cancellation")
	assert.Equal(t, time.Second, k.Now(), "the cancelled timer does not move time on")
}

func TestBackgroundEventsDoNotPullTimeForward(t *testing.T) {
	k := newKernel(1)
	defer k.Close()
	fired := 0
	k.Alarm(time.Minute, func() { fired++ })
	stop := run(t, k, func(ctx context.Context) {})
	assert.Equal(t, Drained, stop)
	assert.Equal(t, 0, fired, "a background event waits for something else to move time")
	assert.Equal(t, time.Duration(0), k.Now())

	stop, err := k.Drive(2 * time.Minute)
	require.NoError(t, err)
	assert.Equal(t, ReachedTarget, stop)
	assert.Equal(t, 1, fired, "advancing past it runs it")
	assert.Equal(t, 2*time.Minute, k.Now())
}

func TestTimerStop(t *testing.T) {
	k := newKernel(1)
	defer k.Close()
	fired := false
	tm := k.After(time.Second, func() { fired = true })
	assert.True(t, tm.Stop())
	assert.False(t, tm.Stop(), "a second Stop does nothing")
	run(t, k, func(ctx context.Context) {})
	assert.False(t, fired)
	assert.Equal(t, time.Duration(0), k.Now(), "a stopped keep-alive timer does not move time")
}

func TestGateIsFIFO(t *testing.T) {
	k := newKernel(3)
	defer k.Close()
	var gate Gate
	var arrivals, order []int
	run(t, k, func(ctx context.Context) {
		me := FromContext(ctx)
		gate.Acquire(me, "holding")
		for i := range 5 {
			k.Go(ctx, fmt.Sprint(i), func(ctx context.Context) {
				t := FromContext(ctx)
				arrivals = append(arrivals, i)
				gate.Acquire(t, "waiting")
				order = append(order, i)
				gate.Release()
			})
		}
		// Let every task queue on the gate before releasing it.
		_ = me.Sleep(ctx, time.Second)
		gate.Release()
	})
	assert.Len(t, order, 5)
	assert.Equal(t, arrivals, order, "the gate serves waiters in arrival order")
	assert.True(t, gate.Free())
}

func TestPanicInTaskIsKept(t *testing.T) {
	k := newKernel(1)
	defer k.Close()
	run(t, k, func(ctx context.Context) { panic("boom") })
	p := k.TakePanics()
	require.Len(t, p, 1)
	assert.Equal(t, "boom", p[0].Value)
	assert.Equal(t, "root", p[0].Task)
}

func TestDriveFromTaskIsRefused(t *testing.T) {
	k := newKernel(1)
	defer k.Close()
	var err error
	run(t, k, func(ctx context.Context) { _, err = k.Drive(-1) })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "already running")
	assert.Error(t, func() error {
		var e error
		run(t, k, func(ctx context.Context) { e = k.Close() })
		return e
	}())
}

func TestBlockAfterCloseReturnsAtOnce(t *testing.T) {
	k := newKernel(1)
	require.NoError(t, k.Close())
	tk := k.Go(context.Background(), "late", func(ctx context.Context) {})
	assert.True(t, tk.Finished(), "a task started after Close never runs")
	assert.True(t, errors.Is(ErrClosed, ErrClosed))
}

// Issue 14: n tasks started together that run one after another without
// blocking share one worker goroutine. Each used to get its own goroutine
// when it was started, so 100,000 calls started from one Group parked
// 100,000 goroutines and grew 100,000 stacks before the first one ran.
func TestScale_TasksStartedTogetherShareOneWorker(t *testing.T) {
	k := newKernel(1)
	defer k.Close()
	ran := 0
	stop := run(t, k, func(ctx context.Context) {
		for i := range 1000 {
			k.Go(ctx, fmt.Sprint(i), func(ctx context.Context) { ran++ })
		}
	})
	assert.Equal(t, Drained, stop)
	assert.Equal(t, 1000, ran)
	assert.Equal(t, 1, len(k.workers), "the root's worker ran every task in turn")
}

// H1, issue 14: a task that was started but never ran has no goroutine yet;
// Close ends the run without waiting for one (goleak checks none is left).
func TestH1_CloseForgetsTasksThatNeverRan(t *testing.T) {
	k := newKernel(1)
	ran := false
	k.Go(context.Background(), "never", func(ctx context.Context) { ran = true })
	require.NoError(t, k.Close())
	assert.False(t, ran)
	assert.Empty(t, k.workers)
}

// O3, issue 14: a gate's line is first come, first served, a reserved place
// included, and a task that got the gate is out of the line (it can queue
// again later). Whether a task is in line is a mark on it, not a scan of
// the line, which cost O(line) per Acquire: O(n²) for n calls waiting on
// one object (see BenchmarkGateLine).
func TestO3_GateLineKeepsOrderAndForgetsWhoLeft(t *testing.T) {
	k := newKernel(1)
	defer k.Close()
	var g Gate
	var order []string
	stop := run(t, k, func(ctx context.Context) {
		me := FromContext(ctx)
		g.Acquire(me, "first")
		reserved := k.Go(ctx, "reserved", func(ctx context.Context) {
			g.Acquire(FromContext(ctx), "reserved place")
			order = append(order, "reserved")
			g.Release()
		})
		g.Reserve(reserved)
		for i := range 3 {
			k.Go(ctx, fmt.Sprint(i), func(ctx context.Context) {
				tk := FromContext(ctx)
				for round := range 2 { // queue twice: the mark is gone after the first
					g.Acquire(tk, "in line")
					order = append(order, fmt.Sprintf("%d.%d", i, round))
					assert.Nil(t, tk.queued)
					require.NoError(t, tk.Sleep(ctx, 0)) // yields the gate: back in line
					g.Release()
				}
			})
		}
		require.NoError(t, me.Sleep(ctx, time.Second))
		g.Release()
	})
	assert.Equal(t, Drained, stop)
	assert.Equal(t, "reserved", order[0], "the reserved place comes first")
	assert.Len(t, order, 7)
	assert.Nil(t, g.Owner())
	assert.True(t, g.Free())
}

// BenchmarkGateLine: n tasks queue at one gate held by the root, then go
// through it one by one. One op is one task's turn; ns/op must not grow
// with n.
func BenchmarkGateLine(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for range b.N {
				k := newKernel(1)
				var g Gate
				k.Go(context.Background(), "root", func(ctx context.Context) {
					me := FromContext(ctx)
					g.Acquire(me, "root")
					for range n {
						k.Go(ctx, "waiter", func(ctx context.Context) {
							g.Acquire(FromContext(ctx), "in line")
							g.Release()
						})
					}
					_ = me.Sleep(ctx, time.Second) // all n queue meanwhile
					g.Release()
				})
				if _, err := k.Drive(-1); err != nil {
					b.Fatal(err)
				}
				_ = k.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/waiter")
		})
	}
}

// H1, issue 14: a task joins the live list when it first runs, but deadlock
// reports still name the blocked tasks in start order, whether Go or Spawn
// started them (Spawn's tasks get their Task only when they run).
func TestH1_DeadlockReportKeepsStartOrder(t *testing.T) {
	k := newKernel(7)
	defer k.Close()
	var g Gate
	waiters := &funcRunner{name: "waiter", fn: func(ctx context.Context, _ uint32) { g.Acquire(FromContext(ctx), "gate") }}
	stop := run(t, k, func(ctx context.Context) {
		g.Acquire(FromContext(ctx), "root")
		for i := range 20 {
			if i%3 == 2 {
				k.Go(ctx, fmt.Sprintf("go %d", i+1), func(ctx context.Context) { g.Acquire(FromContext(ctx), "gate") })
				continue
			}
			k.Spawn(waiters, uint32(i+1))
		}
		FromContext(ctx).Block(context.Background(), "forever")
	})
	require.Equal(t, Deadlocked, stop)
	blocked := k.Blocked()
	require.Len(t, blocked, 21)
	assert.Equal(t, "root: forever", blocked[0])
	for i, b := range blocked[1:] {
		name := fmt.Sprintf("waiter %d", i+1)
		if i%3 == 2 {
			name = fmt.Sprintf("go %d", i+1)
		}
		assert.Equal(t, name+": gate", b)
	}
}

// O3: a yielding wait (Sleep, Signal.Wait, Signal.WaitFor) lets the
// task's Work go and takes it back before the task goes on, so another
// task holds the gate meanwhile; Block keeps it. A task without Work
// yields nothing.
func TestO3_AYieldingWaitLetsTheWorkGo(t *testing.T) {
	k := newKernel(3)
	defer k.Close()
	var g Gate
	var order []string
	stop := run(t, k, func(ctx context.Context) {
		me := FromContext(ctx)
		g.Acquire(me, "root")
		me.SetWork(&gateWork{name: "root", g: &g})
		k.Go(ctx, "other", func(ctx context.Context) {
			o := FromContext(ctx)
			for range 3 {
				g.Acquire(o, "other")
				order = append(order, "other")
				g.Release()
				_ = o.Sleep(ctx, time.Millisecond)
			}
		})
		require.NoError(t, me.Sleep(ctx, 0))
		assert.Same(t, me, g.Owner(), "taken back after the sleep")
		var never Signal
		assert.False(t, never.WaitFor(ctx, me, "a signal nobody fires", time.Millisecond))
		assert.Same(t, me, g.Owner(), "taken back after the wait")
		assert.Equal(t, WokenByTimer, me.BlockFor(ctx, "not yielding", time.Millisecond))
		order = append(order, "root")
		me.SetWork(nil)
		g.Release()
	})
	assert.Equal(t, Drained, stop)
	assert.Equal(t, []string{"other", "other", "root", "other"}, order)
}

// Issue 14: a Task fits in 240 bytes, a size class of Go's allocator (see
// the layout of its fields): 100,000 tasks of a Group hold one each.
func TestTaskFitsItsSizeClass(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(Task{}), uintptr(240))
}
