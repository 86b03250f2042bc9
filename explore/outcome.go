package explore

import (
	"reflect"
	"time"
	"unsafe"

	"github.com/dosim/dosim/internal/seal"
	"github.com/dosim/dosim/runtime"
)

// A step from the state a turn began in, in the run, is the run's own:
// replayed from there with its reads the turn computes what it computed
// as it ran (rule C1), so the model takes the outcome the run's history
// kept (runtime.Outcome) instead of replaying it. Most of a history's
// steps are such, taken in the order the run took them; the other orders
// the check tries replay as before.

// ran returns the run's own outcome of alt a's turn when s is the state
// it began in, on a fresh instance as the model's state has it.
func (c *checker) ran(s *state, a *alt, k stepKey) (runtime.Replayed, bool) {
	if k.cont || k.cut || s.inst != nil || a.together != nil || s.st.WebSockets != nil {
		return runtime.Replayed{}, false
	}
	before, after := runtime.Outcome(seal.Key{}, a.turn)
	if before == nil || !sameAlarm(s.st.Alarm, before.Alarm) || before.WebSockets != nil {
		return runtime.Replayed{}, false
	}
	if s.key[:s.stored] != c.beforeKey(before) {
		return runtime.Replayed{}, false
	}
	c.m.ms.taken.Add(1)
	return *after, true
}

// beforeKey is the canonical text of the storage a turn began with, made
// once per check: a turn that follows another began with the storage the
// other left, the same map (runtime's lastState), whose text the step
// that took the other's outcome made already (noteAfter).
func (c *checker) beforeKey(before *runtime.ObjectState) string {
	id := storageID(before.Storage)
	if key, ok := c.befores[id]; ok && id != nil {
		return key
	}
	storage := before.Storage
	if storage == nil {
		storage = map[string]any{}
	}
	var buf [256]byte
	key := string(appendStorage(buf[:0], storage))
	c.noteStorage(id, key)
	return key
}

// noteAfter keeps the text of the storage a step from a turn's own
// outcome left, for the next turn's beforeKey.
func (c *checker) noteAfter(after *runtime.Replayed, to *state) {
	c.noteStorage(storageID(after.State.Storage), to.key[:to.stored])
}

func (c *checker) noteStorage(id unsafe.Pointer, key string) {
	if id == nil {
		return
	}
	if c.befores == nil {
		c.befores = map[unsafe.Pointer]string{}
	}
	c.befores[id] = key
}

// storageID is the identity of a storage map (nil for none): the
// history's states are the runtime's own, never changed, so one map is
// one text.
func storageID(storage map[string]any) unsafe.Pointer {
	if storage == nil {
		return nil
	}
	return reflect.ValueOf(storage).UnsafePointer()
}

// sameAlarm reports whether two alarms are one, as a state's key tells
// them apart (or more strictly).
func sameAlarm(a, b runtime.AlarmState) bool {
	return a.Set == b.Set && a.At.Equal(b.At) && a.Retry == b.Retry && a.Backoff == b.Backoff &&
		a.Infra == b.Infra && a.GaveUp == b.GaveUp
}

// replay replays turn t on the instance lineage describes (or session),
// adding up the time it takes when the models are timed.
func (m *model) replay(ctor runtime.Constructor, lineage runtime.Lineage, t *runtime.Turn, in *runtime.Interleaving, session *runtime.Session) (runtime.Replayed, *runtime.Session) {
	var start time.Time
	if m.ms.timed {
		start = time.Now()
	}
	rep, after := runtime.ReplayToRead(seal.Key{}, ctor, lineage, t, in, session)
	if m.ms.timed {
		m.ms.mu.Lock()
		m.ms.replaying += time.Since(start)
		m.ms.mu.Unlock()
	}
	return rep, after
}
