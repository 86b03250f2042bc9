package agent_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dosim/dosim/agent"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// world is a runtime with one namespace of agents, and what the agents
// saw. It lives outside the instances, so it outlasts a reset.
type world struct {
	t        *testing.T
	rt       *runtime.Runtime
	ns       *runtime.Namespace
	builds   int
	log      []string                                 // what the callbacks did, "name@elapsed"
	fails    map[string]int                           // callback payload -> failures still to come
	job      func(ctx context.Context, st self) error // what the next Do call runs
	errs     []error                                  // what OnError received
	alarms   []object.AlarmInfo                       // deliveries of the alarm
	alarmAt  []time.Duration                          // and when
	alarmErr func(info object.AlarmInfo) error
	defaults agent.RetryOptions // the class's retry defaults
}

// tester is the object the tests use: it runs jobs, callbacks that fail
// as the world says, alarms, and takes the errors of its tasks.
type tester struct {
	agent.Agent
	w  *world
	st *object.State
}

// self is what a job sees of the object it runs in: its State and its
// Agent, so that st.Now() and st.Schedule(...) both read as they would in
// a method of the class.
type self struct {
	*agent.Agent
	*object.State
}

var (
	_ object.Alarmer       = (*tester)(nil)
	_ object.TaskRunner    = (*tester)(nil)
	_ agent.ErrorHandler   = (*tester)(nil)
	_ agent.RetryDefaulter = (*tester)(nil)
)

// self is the tester as a job sees it.
func (a *tester) self() self { return self{Agent: &a.Agent, State: a.st} }

func (a *tester) Methods() object.Methods {
	return object.Methods{
		"Do":    object.Func(func(ctx context.Context) error { return a.w.job(ctx, a.self()) }),
		"Work":  object.Func(a.Work),
		"Slow":  object.Func(a.Slow),
		"NoArg": object.Func(func(ctx context.Context) error { a.w.note("noarg"); return nil }),
		"Count": object.Func(func(ctx context.Context, m map[string]int) error {
			a.w.note(fmt.Sprint("n=", m["n"]))
			m["n"]++ // changes only this attempt's copy
			if a.w.fails["count"] > 0 {
				a.w.fails["count"]--
				return errors.New("count failed")
			}
			return nil
		}),
		"Crash": object.Func(func(ctx context.Context) error {
			if a.w.job != nil {
				return a.w.job(ctx, a.self())
			}
			return nil
		}),
	}
}

// Work logs p and fails while the world says p should.
func (a *tester) Work(ctx context.Context, p string) error {
	a.w.note(p)
	if a.w.fails[p] > 0 {
		a.w.fails[p]--
		return fmt.Errorf("%s failed", p)
	}
	return nil
}

// Slow logs its start and end around a one-second sleep.
func (a *tester) Slow(ctx context.Context, p string) error {
	a.w.note(p + ":start")
	if err := a.st.Sleep(ctx, time.Second); err != nil {
		return err
	}
	a.w.note(p + ":end")
	return nil
}

func (a *tester) OnError(ctx context.Context, err error) { a.w.errs = append(a.w.errs, err) }

func (a *tester) RetryDefaults() agent.RetryOptions { return a.w.defaults }

func (a *tester) Alarm(ctx context.Context, info object.AlarmInfo) error {
	a.w.alarms = append(a.w.alarms, info)
	a.w.alarmAt = append(a.w.alarmAt, a.w.rt.Elapsed())
	if a.w.alarmErr != nil {
		return a.w.alarmErr(info)
	}
	return nil
}

func (w *world) note(s string) { w.log = append(w.log, fmt.Sprintf("%s@%v", s, w.rt.Elapsed())) }

// newWorld makes a world; the method "Crash" resets the object that runs it.
func newWorld(t *testing.T, seed uint64) *world {
	t.Helper()
	plan := transport.Plan(transport.Rule{Method: "Crash", Fault: transport.FailAfterDelivery})
	w := &world{t: t, fails: map[string]int{}}
	w.rt = runtime.New(runtime.WithSeed(seed), runtime.WithFaults(plan), runtime.WithLogger(zaptest.NewLogger(t)))
	t.Cleanup(func() { require.NoError(t, w.rt.Close()) })
	w.ns = w.rt.Namespace("AGENT", func(st *object.State) object.Object {
		w.builds++
		return &tester{w: w, st: st}
	})
	return w
}

// do runs fn inside a turn of the agent called name.
func (w *world) do(ctx context.Context, name string, fn func(ctx context.Context, st self) error) error {
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
func (w *world) inside(fn func(ctx context.Context, st self) error) {
	w.t.Helper()
	require.NoError(w.t, w.rt.Run(func(ctx context.Context) error { return w.do(ctx, "a", fn) }), "seed %d", w.rt.Seed())
}

// crash runs job (if not nil) in a turn of agent name that then resets
// the object: its in-memory fields are lost, storage stays.
func (w *world) crash(name string, job func(ctx context.Context, st self) error) {
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
