package sched

// Work is what the kernel's owner runs on a task and attaches to it with
// Task.SetWork: for the runtime, an object turn. The kernel knows it only
// through these methods, and keeps nothing of the owner's but this value;
// the owner recovers its own type from Task.Work.
//
// A yielding wait (Task.Sleep, Signal.Wait, Signal.WaitFor) asks the work
// to let go of what others may use meanwhile (an object's input gate, rule
// O3) and to take it back before the task goes on. Block and Gate.Acquire
// are not yielding: they keep what the work holds.
type Work interface {
	// String names the work in stall and deadlock reports, after the
	// task's name ("turn 3 NS/obj.Method attempt 1").
	String() string
	// Leave is called by the task t that runs the work as it starts a
	// yielding wait; it reports whether it let anything go.
	Leave(t *Task) bool
	// Return is called by t after a yielding wait for which Leave reported
	// true, before t goes on.
	Return(t *Task)
}

// SetWork attaches w to t, the running task (nil: none), and publishes it
// to the watchdog, which names the work when t stalls (see Kernel.wait).
func (t *Task) SetWork(w Work) {
	t.work = w
	t.k.switches.Add(1)
}

// Work returns what SetWork attached to t, nil for none.
func (t *Task) Work() Work { return t.work }

// Leave lets go of what t's work holds, as a yielding wait does, and
// returns the work to hand to Return once t is to go on; nil when nothing
// was let go. It is for a wait the kernel does not know as one (a turn run
// on its caller's task, which yields the caller's gate meanwhile).
func (t *Task) Leave() Work {
	if w := t.work; w != nil && w.Leave(t) {
		return w
	}
	return nil
}

// Return takes back what Leave let go (w from Leave; nil: nothing).
func (t *Task) Return(w Work) {
	if w != nil {
		w.Return(t)
	}
}

// describe names a task with what it runs (its Work).
func (k *Kernel) describe(t *Task) string {
	if t == nil {
		return "the scheduler (a timer callback)"
	}
	if t.work != nil {
		return t.Name() + " " + t.work.String()
	}
	return t.Name()
}
