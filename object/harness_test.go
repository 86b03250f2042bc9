package object_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// world is a runtime with one namespace of objects that run jobs and
// handle their alarm, and what they saw. It lives outside the instances,
// so it outlasts a reset. (Package agent's tests have a larger one, for
// tasks and retries.)
type world struct {
	t        *testing.T
	rt       *runtime.Runtime
	ns       *runtime.Namespace
	builds   int
	job      func(ctx context.Context, st *object.State) error // what the next Do call runs
	alarms   []object.AlarmInfo                                // deliveries of the alarm
	alarmAt  []time.Duration                                   // and when
	alarmErr func(info object.AlarmInfo) error
}

// agent is the object the tests use: it runs jobs and handles its alarm.
type agent struct {
	w  *world
	st *object.State
}

var _ object.Alarmer = (*agent)(nil)

func (a *agent) Methods() object.Methods {
	return object.Methods{
		"Do": object.Func(func(ctx context.Context) error { return a.w.job(ctx, a.st) }),
		"Crash": object.Func(func(ctx context.Context) error {
			if a.w.job != nil {
				return a.w.job(ctx, a.st)
			}
			return nil
		}),
	}
}

func (a *agent) Alarm(ctx context.Context, info object.AlarmInfo) error {
	a.w.alarms = append(a.w.alarms, info)
	a.w.alarmAt = append(a.w.alarmAt, a.w.rt.Elapsed())
	if a.w.alarmErr != nil {
		return a.w.alarmErr(info)
	}
	return nil
}

// newWorld makes a world; the method "Crash" resets the object that runs it.
// newWorld makes a world whose AGENT namespace takes opts (SQLite-backed
// unless runtime.KeyValueBacked is among them).
func newWorld(t *testing.T, seed uint64, opts ...runtime.NamespaceOption) *world {
	t.Helper()
	plan := transport.Plan(transport.Rule{Method: "Crash", Fault: transport.FailAfterDelivery})
	w := &world{t: t}
	w.rt = runtime.New(runtime.WithSeed(seed), runtime.WithFaults(plan), runtime.WithLogger(zaptest.NewLogger(t)))
	t.Cleanup(func() { require.NoError(t, w.rt.Close()) })
	w.ns = w.rt.Namespace("AGENT", func(st *object.State) object.Object {
		w.builds++
		return &agent{w: w, st: st}
	}, opts...)
	return w
}

// do runs fn inside a turn of the agent called name.
func (w *world) do(ctx context.Context, name string, fn func(ctx context.Context, st *object.State) error) error {
	w.job = fn
	s, err := w.ns.GetByName(name)
	if err != nil {
		return err
	}
	_, err = s.Call(ctx, "Do")
	return err
}

// inside runs fn in a turn of agent "a" from a fresh Run, failing the test
// on error.
func (w *world) inside(fn func(ctx context.Context, st *object.State) error) {
	w.t.Helper()
	require.NoError(w.t, w.rt.Run(func(ctx context.Context) error { return w.do(ctx, "a", fn) }), "seed %d", w.rt.Seed())
}

// crash runs job (if not nil) in a turn of agent name that then resets
// the object: its in-memory fields are lost, storage stays.
func (w *world) crash(name string, job func(ctx context.Context, st *object.State) error) {
	w.t.Helper()
	before := w.builds
	w.job = job
	err := w.rt.Run(func(ctx context.Context) error {
		s, err := w.ns.GetByName(name)
		if err != nil {
			return err
		}
		_, err = s.Call(ctx, "Crash")
		return err
	})
	require.Error(w.t, err, "Crash fails after delivery")
	require.GreaterOrEqual(w.t, w.builds, before)
}

// events returns the runtime's events of kind, as "detail@at".
func (w *world) events(kind object.EventKind) []string {
	var out []string
	for _, e := range w.rt.Events(runtime.Match{Event: kind}) {
		out = append(out, fmt.Sprintf("%s@%v", e.Text(), e.At))
	}
	return out
}
