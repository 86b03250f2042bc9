package runtime

// A host is the runtime's side of one object: its instance, storage,
// gate, duplicate table and compiled methods, and how it is built.

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/dosim/dosim/internal/invoke"
	"github.com/dosim/dosim/internal/sched"
	"github.com/dosim/dosim/internal/seal"
	"github.com/dosim/dosim/internal/spare"
	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/object"
	"github.com/google/uuid"
)

// ErrSetup is wrapped by errors found when a request reaches an object
// before any user code runs: the constructor failed, a method has a bad
// signature, the method does not exist, or the arguments do not fit.
var ErrSetup = errors.New("cannot run the request")

// ErrBadSignature is wrapped by the error for a method with a bad signature.
var ErrBadSignature = invoke.ErrSignature

// ErrArguments is wrapped by errors for arguments of the wrong count or type.
var ErrArguments = invoke.ErrArguments

// host runs one object: its input gate, its instance, its storage and the
// identities it has received.
type host struct {
	ns      *Namespace
	id      object.ID
	target  *wire.Target
	gate    sched.Gate
	storage *object.Storage
	state   *object.State

	inst    object.Object
	methods object.Methods // as the instance listed them; checked by build
	// compiled caches the methods called on this instance (at most
	// maxCompiled), so that a call does not compile its method again.
	compiled []*compiled
	// carried is the first attempt whose caller is delivering it (a
	// courier, courier.go), while it does: nil otherwise.
	carried *flight
	// spare is the last turn run on its caller's task, free for the next:
	// once such a turn has ended, nothing holds its turnInfo (the method's
	// context is a sched.Context of its own, see newTurnContext).
	spare   spare.One[turnInfo]
	handler http.Handler

	// The identities received whose call may still send attempts: most
	// objects have at most one at a time, kept inline; more go to a map.
	one    uuid.UUID
	hasOne bool
	seen   map[uuid.UUID]struct{}

	ws       *sockets          // accepted WebSockets (rules W1-W5, websocket.go); nil until the first
	building bool              // the constructor is running
	alarm    alarmState        // rule O6, see alarm.go
	lanes    *[wire.Lanes]lane // background timers: alarm, schedules, queue; nil until used
	// instances counts the instances built (rule O2), and ctor is what the
	// current one's constructor read (WithHistory): a turn's Instance and
	// Ctor.
	instances int
	ctor      []Read
	// ctorWrote says the current instance's constructor wrote its
	// storage, recorded an effect, or set or deleted the alarm: a replay
	// that builds it again does it again (see outcome.go).
	ctorWrote bool
	last      lastState // the state an outcome took last (host.lastState)

	// The object's life (life.go): the request turns delivered and not
	// ended (running or queued at the gate), when the last turn ended, and
	// whether the eviction check is pending (rules L3, L5).
	turns      *turnInfo
	lastActive time.Duration
	evictArmed bool
	// hist is what the runtime's history keeps of the object (WithHistory),
	// from its first turn on; nil before, and without a history.
	hist *objectLog
	// alarmRuns and alarmFailures count the alarm's deliveries (Backlogs).
	alarmRuns, alarmFailures int
}

type compiled struct {
	fn        invoke.Func
	retryable bool
}

func newHost(ns *Namespace, id object.ID) *host {
	st := object.NewStorage()
	if ns.backend == object.KeyValueBacked {
		st = object.NewKeyValueStorage()
	}
	h := &host{ns: ns, id: id, storage: st}
	h.target = &wire.Target{Namespace: ns.name, Object: id.Label()}
	h.state = object.Hosting(seal.Key{}).NewState(id, h.storage, hostView{h})
	h.startJournal()
	if hs := ns.r.hist; hs != nil {
		h.storage.NotifyWrites(func() { hs.noteOutside(ns.r, h) })
	}
	return h
}

// build constructs the instance if needed (rule O2).
func (h *host) build() (err error) {
	if h.inst != nil {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: constructor of %s/%s panicked: %v", ErrSetup, h.ns.name, h.id.Label(), p)
		}
	}()
	h.building = true
	defer func() { h.building = false }()
	st := h.state
	h.ctor = nil // a new instance's reads; the turns of the last keep theirs
	gen, effects, a := object.Hosting(seal.Key{}).Generation(h.storage), len(h.ns.r.effects), h.alarm
	inst := h.ns.ctor(st)
	h.ctorWrote = object.Hosting(seal.Key{}).Generation(h.storage) != gen || len(h.ns.r.effects) != effects || h.alarm != a
	if h.state != st { // its BlockConcurrencyWhile failed (rule L6)
		return fmt.Errorf("%w: constructor of %s/%s: BlockConcurrencyWhile failed and reset the object", ErrSetup, h.ns.name, h.id.Label())
	}
	if inst == nil {
		return fmt.Errorf("%w: constructor of namespace %q returned nil for %s", ErrSetup, h.ns.name, h.id.Label())
	}
	methods := inst.Methods()
	if err := checkMethods(h.ns.name, methods); err != nil {
		return err
	}
	h.inst, h.methods, h.compiled = inst, methods, nil
	h.handler, _ = inst.(http.Handler)
	h.instances++
	return nil
}
