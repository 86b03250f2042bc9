package runtime_test

import (
	"context"
	"errors"
	goruntime "runtime"
	"sync"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// misbehaving is an object whose methods step outside the simulation.
type misbehaving struct {
	st      *object.State
	ch      chan struct{} // Wait blocks on it
	mu      *sync.Mutex   // Lock blocks on it
	release chan struct{} // Spawn's goroutine calls once it is closed
	errs    chan error    // what Spawn's goroutine got
	other   *stub.Stub
}

func (m *misbehaving) Methods() object.Methods {
	return object.Methods{
		"Exit": object.Func(func(ctx context.Context) error { goruntime.Goexit(); return nil }),
		"Wait": object.Func(func(ctx context.Context) error { <-m.ch; return nil }),
		"Lock": object.Func(func(ctx context.Context) error { m.mu.Lock(); return nil }),
		"Nap":  object.Func(func(ctx context.Context) error { time.Sleep(300 * time.Millisecond); return nil }),
		"Spawn": object.Func(func(ctx context.Context) error {
			go func() {
				<-m.release
				_, err := m.other.Call(ctx, "Ping")
				m.errs <- err
				m.errs <- m.st.Sleep(ctx, time.Second)
			}()
			return nil
		}),
		"Ping": object.Func(func(ctx context.Context) error { return nil }),
	}
}

type world struct {
	rt  *runtime.Runtime
	obj *misbehaving
	s   *stub.Stub
}

func newMisbehaving(t *testing.T, opts ...runtime.Option) *world {
	t.Helper()
	m := &misbehaving{ch: make(chan struct{}), mu: &sync.Mutex{}, release: make(chan struct{}), errs: make(chan error, 2)}
	rt := runtime.New(opts...)
	ns := rt.Namespace("BAD", func(st *object.State) object.Object { m.st = st; return m })
	s, err := ns.GetByName("b")
	require.NoError(t, err)
	m.other, err = ns.GetByName("other")
	require.NoError(t, err)
	return &world{rt: rt, obj: m, s: s}
}

// H1: a method that calls runtime.Goexit (as t.FailNow does) used to hang
// Run for good. Now its task fails like a panic, naming the method, and
// Close works. Both on the caller's task and on a turn task of its own.
func TestH1_GoexitInMethodFailsTheRun(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rules []transport.Rule
	}{
		{"turn on the caller's task", nil},
		{"turn on its own task", []transport.Rule{{Method: "Exit", Delay: time.Millisecond}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newMisbehaving(t, runtime.WithFaults(transport.Plan(tc.rules...)))
			err := w.rt.Run(func(ctx context.Context) error { _, err := w.s.Call(ctx, "Exit"); return err })
			var pe *runtime.PanicError
			require.ErrorAs(t, err, &pe)
			assert.True(t, pe.Goexit)
			assert.Contains(t, err.Error(), "BAD/b.Exit attempt 1")
			assert.Contains(t, err.Error(), "called runtime.Goexit")
			require.NoError(t, w.rt.Close())
		})
	}
}

// H1: a method blocked on a raw channel or a mutex, or sleeping for real,
// used to hang Run. The watchdog ends the run with a *StallError naming
// the task, the namespace, object and method, and the likely causes; Close
// works. The stall limit is tiny so that the test ends soon; nothing here
// is timed.
func TestH1_BlockedOutsideTheSimulationStalls(t *testing.T) {
	for _, method := range []string{"Wait", "Lock", "Nap"} {
		t.Run(method, func(t *testing.T) {
			ignore := goleak.IgnoreCurrent()
			w := newMisbehaving(t, runtime.WithStallLimit(runtime.MinStallLimit))
			w.obj.mu.Lock()
			err := w.rt.Run(func(ctx context.Context) error { _, err := w.s.Call(ctx, method); return err })
			require.ErrorIs(t, err, runtime.ErrStalled)
			var se *runtime.StallError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, "root BAD/b."+method+" attempt 1", se.Task)
			assert.Contains(t, err.Error(), "raw channel")
			assert.Contains(t, err.Error(), "--stall-limit")
			require.NoError(t, w.rt.Close())
			require.ErrorIs(t, w.rt.Run(func(context.Context) error { return nil }), runtime.ErrClosed)

			// The stalled goroutine is the only one left; once what it waits
			// for comes, it ends without touching the simulation.
			close(w.obj.ch)
			w.obj.mu.Unlock()
			goleak.VerifyNone(t, ignore)
		})
	}
}

// H1: a goroutine started by a method that calls a stub, or sleeps, after
// the method's turn ended gets ErrNotInTask instead of racing the
// scheduler (run this under -race).
func TestH1_GoroutineCallingAStubGetsErrNotInTask(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rules []transport.Rule
	}{
		{"turn on the caller's task", nil},
		{"turn on its own task", []transport.Rule{{Method: "Spawn", Delay: time.Millisecond}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newMisbehaving(t, runtime.WithFaults(transport.Plan(tc.rules...)))
			defer func() { require.NoError(t, w.rt.Close()) }()
			require.NoError(t, w.rt.Run(func(ctx context.Context) error {
				if _, err := w.s.Call(ctx, "Spawn"); err != nil {
					return err
				}
				close(w.obj.release) // the turn has ended
				for range 3 {        // keep the simulation busy meanwhile
					if _, err := w.s.Call(ctx, "Ping"); err != nil {
						return err
					}
				}
				return nil
			}))
			callErr, sleepErr := <-w.obj.errs, <-w.obj.errs
			assert.ErrorIs(t, callErr, runtime.ErrNotInTask)
			assert.ErrorIs(t, sleepErr, runtime.ErrNotInTask)
			assert.Len(t, w.rt.Calls(), 4, "one Spawn and three Pings: the goroutine's call was never made")
		})
	}
}

// context.WithTimeout measures wall-clock time and never fires in a
// simulation that skips through virtual time; runtime.WithTimeout fires at
// the virtual instant, with DeadlineExceeded, inside methods too.
func TestH1_WithTimeoutFiresInVirtualTime(t *testing.T) {
	rt := newRuntime(t)
	var got error
	var at time.Duration
	var deadline time.Time
	run(t, rt, func(ctx context.Context) error {
		tctx, cancel := runtime.WithTimeout(ctx, 1500*time.Millisecond)
		defer cancel()
		deadline, _ = tctx.Deadline()
		got = rt.Sleep(tctx, time.Hour)
		at = rt.Elapsed()
		return nil
	})
	assert.ErrorIs(t, got, context.DeadlineExceeded)
	assert.Equal(t, 1500*time.Millisecond, at)
	assert.Equal(t, runtime.Epoch.Add(1500*time.Millisecond), deadline)

	// Cancelled early, it does not fire; outside a task it is cancelled.
	run(t, rt, func(ctx context.Context) error {
		tctx, cancel := runtime.WithTimeout(ctx, time.Second)
		cancel()
		got = tctx.Err()
		return nil
	})
	assert.ErrorIs(t, got, context.Canceled)
	octx, cancel := runtime.WithTimeout(context.Background(), time.Second)
	defer cancel()
	assert.ErrorIs(t, context.Cause(octx), runtime.ErrNotInTask)
	assert.True(t, errors.Is(octx.Err(), context.Canceled))
}

// A method's own virtual timeout ends its outgoing wait at the instant.
func TestH1_WithTimeoutInsideAMethod(t *testing.T) {
	rt := newRuntime(t)
	var sleptFor time.Duration
	var sleepErr error
	ns := rt.Namespace("T", func(st *object.State) object.Object {
		return methods{"Run": object.Func(func(ctx context.Context) error {
			tctx, cancel := runtime.WithTimeout(ctx, 250*time.Millisecond)
			defer cancel()
			start := rt.Elapsed()
			sleepErr = st.Sleep(tctx, time.Minute)
			sleptFor = rt.Elapsed() - start
			return nil
		})}
	})
	s := mustStub(t, ns, "t")
	run(t, rt, func(ctx context.Context) error { _, err := s.Call(ctx, "Run"); return err })
	assert.ErrorIs(t, sleepErr, context.DeadlineExceeded)
	assert.Equal(t, 250*time.Millisecond, sleptFor)
}

// methods is an object made of a method table.
type methods object.Methods

func (m methods) Methods() object.Methods { return object.Methods(m) }

// keeper keeps the context of its Keep turn and uses it in a later turn.
type keeper struct {
	st   *object.State
	kept context.Context
}

func (k *keeper) Methods() object.Methods {
	return object.Methods{
		"Keep": object.Func(func(ctx context.Context) error { k.kept = ctx; return nil }),
		// UseKept sleeps with the kept context, from a later turn of the
		// same object: the kept one has ended, whatever runs now.
		"UseKept": object.Func(func(ctx context.Context) error { return k.st.Sleep(k.kept, time.Millisecond) }),
	}
}

// H1: a turn's context that a method kept stays ended after the turn, even
// while a later turn of the same object runs on the same caller's task
// (dosim reuses the turn's bookkeeping, never its context).
func TestH1_AKeptContextStaysEndedInLaterTurns(t *testing.T) {
	k := &keeper{}
	rt := runtime.New()
	defer rt.Close()
	ns := rt.Namespace("KEEP", func(st *object.State) object.Object { k.st = st; return k })
	var useErr error
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("k")
		if err != nil {
			return err
		}
		if _, err := s.Call(ctx, "Keep"); err != nil {
			return err
		}
		_, useErr = s.Call(ctx, "UseKept")
		return nil
	}))
	require.Error(t, useErr) // the object's error, as the caller sees it: remote
	assert.Contains(t, useErr.Error(), runtime.ErrNotInTask.Error())
	assert.Equal(t, time.Duration(0), rt.Elapsed(), "the kept context slept")
}

// H1: a stall limit below the floor (runtime.MinStallLimit) made a seed
// fail or pass by the machine's load. It is refused when the runtime
// runs, naming the option, the value and what is allowed.
func TestH1_AStallLimitBelowTheFloorIsRefused(t *testing.T) {
	ran := false
	rt := newRuntime(t, runtime.WithStallLimit(time.Nanosecond))
	err := rt.Run(func(context.Context) error { ran = true; return nil })
	require.Error(t, err)
	assert.False(t, ran)
	assert.Contains(t, err.Error(), "runtime.WithStallLimit: 1ns is below the watchdog's floor of 100ms")
	assert.Contains(t, err.Error(), "at least 100ms")
	require.ErrorIs(t, rt.Advance(time.Second), runtime.ErrStallLimit)

	assert.Equal(t, runtime.DefaultStallLimit, newRuntime(t).StallLimit(), "the default; no process-wide setting changes it")

	for _, d := range []time.Duration{0, -time.Second, runtime.MinStallLimit} {
		require.NoError(t, newRuntime(t, runtime.WithStallLimit(d)).Run(func(context.Context) error { return nil }), "%v", d)
	}
}

// stallingAlarm's handler blocks outside the simulation.
type stallingAlarm struct {
	st *object.State
	ch chan struct{}
}

func (a *stallingAlarm) Methods() object.Methods {
	return object.Methods{"Arm": object.Func(func(ctx context.Context) error {
		return a.st.SetAlarm(ctx, a.st.Now().Add(time.Second))
	})}
}

func (a *stallingAlarm) Alarm(ctx context.Context, _ object.AlarmInfo) error { <-a.ch; return nil }

// H1: an alarm handler that stalls while the root task sleeps used to
// make the watchdog race with the scheduler (go test -race reported it).
// The stall is reported race-free, naming the alarm's turn.
func TestH1_AnAlarmHandlerThatStallsWhileRootSleeps(t *testing.T) {
	a := &stallingAlarm{ch: make(chan struct{})}
	rt := runtime.New(runtime.WithStallLimit(runtime.MinStallLimit))
	ns := rt.Namespace("A", func(st *object.State) object.Object { a.st = st; return a })
	s, err := ns.GetByName("a")
	require.NoError(t, err)
	err = rt.Run(func(ctx context.Context) error {
		if _, err := s.Call(ctx, "Arm"); err != nil {
			return err
		}
		return rt.Sleep(ctx, time.Hour)
	})
	var se *runtime.StallError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "alarm A/a alarm", se.Task)
	assert.Equal(t, time.Second, se.Now)
	require.NoError(t, rt.Close())
	close(a.ch)
}

// H1: after a DeadlockError the next Run used to report the old blocked
// tasks as its own. The tasks stay blocked (the platform would cancel the
// hung requests; dosim cannot end a parked goroutine short of Close), so
// Run, Advance and Quiesce say that the runtime deadlocked earlier and how
// to go on, without running anything; Close works.
func TestH1_ARunAfterADeadlockSaysWhyItCannotRun(t *testing.T) {
	rt := newRuntime(t)
	err := rt.Run(func(ctx context.Context) error {
		g := rt.Group(ctx)
		g.Go(func(ctx context.Context) error { return g.Wait() }) // waits for itself
		return g.Wait()
	})
	var dl *runtime.DeadlockError
	require.ErrorAs(t, err, &dl)
	require.ErrorIs(t, err, runtime.ErrDeadlocked)

	ran := false
	err = rt.Run(func(context.Context) error { ran = true; return nil })
	assert.False(t, ran)
	require.ErrorIs(t, err, runtime.ErrDeadlocked)
	var again *runtime.DeadlockError
	require.ErrorAs(t, err, &again)
	assert.Equal(t, dl.Blocked, again.Blocked, "the error is the deadlock that left the tasks blocked")
	assert.Contains(t, err.Error(), "runtime.Run: the runtime cannot run again: an earlier run ended with work left")
	assert.Contains(t, err.Error(), "make a new runtime")
	require.ErrorIs(t, rt.Advance(time.Second), runtime.ErrDeadlocked)
	require.ErrorIs(t, rt.Quiesce(time.Second), runtime.ErrDeadlocked)
	assert.Zero(t, rt.Elapsed())
}
