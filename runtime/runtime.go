// Package runtime is dosim's deterministic Durable-Object-style runtime: a
// virtual clock, one seeded random source, a fault plan, namespaces of
// objects, and the trace of every call.
//
// Test code hands a function to Run; it runs as the root task of a
// cooperative scheduler, in virtual time. Calls made through stubs, sleeps
// and object turns are further tasks of the same scheduler; exactly one
// runs at a time, and the next is chosen by virtual time, then by a draw
// from the seed. The same seed, program and faults give the same trace,
// byte for byte (rule D1).
//
// Inside a simulated task use rt.Sleep, st.Sleep, stubs and Group, never
// time.Sleep, time.After, raw channels or goroutines: those step outside the
// scheduler and make a run depend on the machine. For a timeout use
// WithTimeout (virtual time), not context.WithTimeout, which measures
// wall-clock time and so almost never fires in a simulation.
//
// Run never hangs (rule H1): a task that blocks outside the scheduler for
// longer than the stall limit (WithStallLimit, default DefaultStallLimit of
// wall-clock time) ends the run with a *StallError naming it; a method that
// calls runtime.Goexit (t.FailNow does) fails the run with a *PanicError; a
// goroutine that calls a stub or a sleep after its turn ended gets
// ErrNotInTask.
//
// Every call's record (CallRecord, rule D2) is kept for Calls and Trace by
// default: about 150 bytes a call. For long runs, WithRecords(KeepLast(n))
// keeps only the last n, and WithRecordSink hands each record over as its
// call ends (dosim run --format jsonl streams them as JSON Lines): ten
// million calls on one object then hold a few megabytes. Checks that read
// all of a run's records (explore's invariants, linearizability) need the
// default.
package runtime

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/dosim/dosim/internal/sched"
	"github.com/dosim/dosim/internal/seal"
	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/transport"
	"go.uber.org/zap"
)

// DefaultSeed is the seed of a runtime made without WithSeed.
const DefaultSeed = 1

// Epoch is where the virtual wall clock starts unless WithStart moves it.
var Epoch = time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)

// ErrClosed is returned by Run, Advance and blocking calls after Close.
var ErrClosed = sched.ErrClosed

// ErrNotInTask is returned by blocking calls made outside a simulated task,
// among them calls from a goroutine that simulated code started (as far as
// the check can tell; see sched.Kernel.Enter).
var ErrNotInTask = sched.ErrNotInTask

// ErrTooManyCalls is the error of a call past the 2,147,483,647th of one
// runtime (a call's number is an int32): a run that long starts a new
// runtime.
var ErrTooManyCalls = wire.ErrTooManyCalls

// ErrStalled is wrapped by a *StallError (rule H1).
var ErrStalled = sched.ErrStalled

// DefaultStallLimit is the stall limit of a runtime made without
// WithStallLimit.
const DefaultStallLimit = sched.DefaultStallLimit

// ErrClockStuck is wrapped by a *ClockError, and by the error of an
// Advance or Quiesce that would move the clock past MaxElapsed.
var ErrClockStuck = sched.ErrClockStuck

// MaxElapsed is the furthest virtual time goes: about 292 years after
// the runtime started (time.Duration's largest value less one). A wait
// that would end later (a sleep, a timeout, an alarm, a link delay: a
// duration near math.MaxInt64, or sleeps that add up past it) never ends.
// Until the end it waits like any other: time moves on for it, running the
// background work on the way, and its context can end it (a sleep "until
// cancelled" works). A run left with nothing else to wait for ends with a
// *ClockError. An Advance or Quiesce past it is refused: the clock cannot
// go there.
const MaxElapsed = sched.End - 1

// MinStallLimit is the least stall limit the watchdog takes: a limit
// between 0 and it would let the machine's load, not the simulated code,
// fail a seed. WithStallLimit below it makes Run fail with an error that
// is ErrStallLimit; 0 or less turns the watchdog off.
const MinStallLimit = sched.MinStallLimit

// ErrStallLimit is what the error of a stall limit below MinStallLimit is
// (errors.Is).
var ErrStallLimit = sched.ErrStallLimit

// CheckStallLimit returns an error that is ErrStallLimit for a stall limit
// the watchdog does not take (above 0 and below MinStallLimit), naming
// the value and what is allowed; nil otherwise. For code that takes the
// limit from its users, as dosim's --stall-limit does.
func CheckStallLimit(d time.Duration) error { return sched.CheckStallLimit(d) }

// DefaultInstantLimit is the instant limit of a runtime made without
// WithInstantLimit.
const DefaultInstantLimit = 100_000

// Runtime is one deterministic simulation. Make it with New, call Close when
// done. Its methods are not safe for use by several goroutines: drive it
// from the test's goroutine and from the tasks it runs.
type Runtime struct {
	seed uint64
	// alarmSeed keys the alarm retry jitter (host.alarmWait): the seed, or
	// in a replay the seed of the run whose turn it replays (Turn.Seed).
	alarmSeed uint64
	rng       *rand.Rand
	pcg       *rand.PCG // rng's source, drawn from directly where it is hot (NewRequestID)
	ties      []byte    // the top bytes of the kernel's draws (WithTieBytes, ties.go)
	k         *sched.Kernel
	log       *zap.Logger
	faults    *transport.FaultPlan
	start     time.Time

	namespaces []*Namespace
	byName     map[string]*Namespace
	setupErrs  []error

	slabs    []slab          // the call records kept (records.go)
	free     []wire.Call     // the records newCall hands out next: the current slab's rest
	contexts []sched.Context // the contexts newTurnContext hands out next (records.go)
	nctx     int             // the size of the last slab of contexts
	begun    int32           // calls begun: the next call's Seq
	sockets  int             // WebSockets accepted: each one's latency draws (websocket_wire.go)
	maxCalls int32           // wire.MaxCalls; lower in a test of ErrTooManyCalls
	records  Records         // which records Calls keeps (WithRecords)
	sink     func(CallRecord)
	stamp    uint32 // logical clock of call starts and ends, finer than virtual time
	effects  []Effect
	events   eventLog       // see Events
	shared   map[string]any // runtime-wide values of object code (circuit breakers)

	stallLimit time.Duration
	noEvict    bool // WithEviction(false): idle objects stay (rule L5)
	// journaling: some object's storage keeps its unconfirmed writes, so
	// outgoing calls pass the output gate (rule L7, gate.go).
	journaling bool
	// callers are the objects whose turns made calls of their own (see
	// Callers); nil until one does.
	callers map[*host]struct{}
	// hist keeps the objects' turns (WithHistory), replay feeds a replayed
	// turn what it read (Replay); orng is the seeded source object code
	// draws from when either is set (rng otherwise).
	hist   *history
	replay *replayer
	orng   *rand.Rand
	// horizon bounds virtual time (WithHorizon, Quiesce); 0: none.
	horizon time.Duration

	// schedule is how ties at an instant are broken (WithSchedule).
	schedule *Schedule

	// optErr is the error of an option that cannot be honoured (a stall
	// limit below the floor): Run and the other driver calls return it.
	optErr error
	// ended is the error of a driver call that left work nothing can move
	// on (a deadlock, a clock that cannot move): later ones return it.
	ended error
	// drives counts driver calls; instantLimit bounds an object's
	// background runs at one instant within one (WithInstantLimit);
	// stuck is the *ClockError of the object that reached it.
	drives       uint64
	instantLimit int
	stuck        *ClockError
}

// Option configures a Runtime.
type Option interface{ apply(*Runtime) }

type optionFunc func(*Runtime)

func (f optionFunc) apply(r *Runtime) { f(r) }

// WithSeed sets the seed of the runtime's single random source (default 1).
// Every tie-break, backoff jitter, random fault and request identity is
// drawn from it.
func WithSeed(seed uint64) Option { return optionFunc(func(r *Runtime) { r.seed = seed }) }

// WithLogger sets the logger (default zap.NewNop()). Tests can pass
// zaptest.NewLogger(t).
func WithLogger(l *zap.Logger) Option {
	return optionFunc(func(r *Runtime) {
		if l != nil {
			r.log = l
		}
	})
}

// WithFaults sets the fault plan the simulated link applies to every
// attempt. A nil plan injects no fault.
func WithFaults(plan *transport.FaultPlan) Option {
	return optionFunc(func(r *Runtime) { r.faults = plan })
}

// WithStallLimit sets the watchdog's wall-clock stall limit (rule H1):
// when a task runs for longer than d without reaching a simulation blocking
// point, Run stops and returns a *StallError. d <= 0 turns the watchdog off
// (a hang then hangs). The default is DefaultStallLimit; a d above 0 and
// below MinStallLimit makes Run fail with an error that is ErrStallLimit
// and says what is allowed. The watchdog reads the wall clock only to
// end a hang; it never changes a simulated result.
func WithStallLimit(d time.Duration) Option {
	return optionFunc(func(r *Runtime) { r.stallLimit = d })
}

// WithInstantLimit bounds the background runs (alarm deliveries,
// scheduled and queued task runs) one object makes at one virtual instant
// within one driver call (Run, Advance, Quiesce), at n (rule H1). Work
// that sets itself up again at the instant it runs (an alarm its handler
// sets to now, a task that schedules or queues itself with no delay) would
// otherwise run for ever while the clock stands still, unseen by the
// horizon and the watchdog. The run then ends with a *ClockError naming
// the object; the run past the limit does not happen. Calls, sleeps and
// other tasks do not count. The default, DefaultInstantLimit, is far above
// what finite work does at one instant (a queue drained at once counts one
// run per item: raise the limit for queues longer than it); n <= 0 turns
// the limit off.
func WithInstantLimit(n int) Option {
	return optionFunc(func(r *Runtime) { r.instantLimit = n })
}

// WithStart moves the virtual wall clock's starting instant (default Epoch).
func WithStart(t time.Time) Option { return optionFunc(func(r *Runtime) { r.start = t }) }

// nopLogger is the default logger, made once (a zap.Logger is read-only):
// an explorer makes a runtime per seed.
var nopLogger = zap.NewNop()

// New makes a runtime.
func New(opts ...Option) *Runtime {
	r := &Runtime{seed: DefaultSeed, log: nopLogger, start: Epoch, byName: map[string]*Namespace{}, maxCalls: wire.MaxCalls,
		instantLimit: DefaultInstantLimit, stallLimit: DefaultStallLimit}
	for _, o := range opts {
		if o != nil {
			o.apply(r)
		}
	}
	r.pcg = rand.NewPCG(r.seed, r.seed^0x9e3779b97f4a7c15)
	r.alarmSeed = r.seed
	r.rng = rand.New(r.pcg)
	switch {
	case r.replay != nil:
		r.orng = rand.New(replaySource{r})
	case r.hist != nil:
		r.orng = rand.New(histSource{r})
	}
	r.k = sched.New(r.kernelRand())
	r.k.SetEpoch(r.start)
	r.applySchedule()
	if err := r.k.SetStallLimit(r.stallLimit); err != nil {
		r.optErr = fmt.Errorf("runtime.WithStallLimit: %w", err)
	}
	if r.horizon > 0 {
		r.k.SetLimit(r.horizon, true)
	}
	return r
}

// Seed returns the runtime's seed.
func (r *Runtime) Seed() uint64 { return r.seed }

// Logger returns the runtime's logger.
func (r *Runtime) Logger() *zap.Logger { return r.log }

// Faults returns the runtime's fault plan (nil: none).
func (r *Runtime) Faults() *transport.FaultPlan { return r.faults }

// Close ends the runtime: tasks still parked (a deadlock, a turn waiting
// forever) are stopped and every goroutine the runtime started has ended
// when Close returns, except, after a *StallError, the stalled goroutine
// if it is still blocked outside the simulation. It is safe to call twice. It fails only when called
// from inside a simulated task.
func (r *Runtime) Close() error {
	err := r.k.Close()
	if r.replay != nil && r.replay.bound != nil {
		_ = r.replay.bound.Close()
	}
	for _, ns := range r.namespaces {
		for _, h := range ns.hosts {
			object.Hosting(seal.Key{}).Close(h.storage) // frees SQL databases (rule Q1)
		}
	}
	return err
}

// setupErr is the error of every namespace that could not be defined.
func (r *Runtime) setupErr() error {
	if len(r.setupErrs) == 0 {
		return nil
	}
	return errors.Join(r.setupErrs...)
}

// Run runs fn as the root task and returns when fn has returned and the work
// it started (calls in flight, their retries, object turns) has drained. It
// returns fn's error; a *DeadlockError if every task blocked with no timer
// pending; a *PanicError if a task panicked or called runtime.Goexit; a
// *StallError if a task blocked outside the simulation for longer than the
// stall limit (it never hangs, rule H1); ErrClosed after Close; or the
// error of a namespace that could not be defined.
func (r *Runtime) Run(fn func(ctx context.Context) error) error {
	if err := r.usable("runtime.Run"); err != nil {
		return err
	}
	if fn == nil {
		return errors.New("runtime.Run: fn is nil")
	}
	if err := r.setupErr(); err != nil {
		return err
	}
	if err := r.faults.Validate(); err != nil {
		return fmt.Errorf("runtime.Run: %w", err)
	}
	var rootErr error
	r.k.Go(context.Background(), "root", func(ctx context.Context) { rootErr = fn(ctx) })
	return r.drive(-1, &rootErr)
}

// usable returns the error that keeps a driver call (op) from running: the
// runtime is closed, an option cannot be honoured, or an earlier driver
// call left work that cannot go on (a deadlock, a stuck clock).
func (r *Runtime) usable(op string) error {
	switch {
	case r.k.Closed():
		return fmt.Errorf("%s: %w", op, ErrClosed)
	case r.optErr != nil:
		return r.optErr
	case r.ended != nil:
		return fmt.Errorf("%s: the runtime cannot run again: an earlier run ended with work left that cannot go on, "+
			"and it would end this one the same way (make a new runtime for the next run; Close this one): %w", op, r.ended)
	}
	return nil
}

// drive runs the kernel until it stops (or reaches target, if >= 0) and
// turns why it stopped into Run's or Advance's error.
func (r *Runtime) drive(target time.Duration, result *error) error {
	r.drives++
	stop, err := r.k.Drive(target)
	if err != nil {
		return driveError(err)
	}
	if p := r.k.TakePanics(); len(p) > 0 {
		return panicError(p[0])
	}
	switch stop {
	case sched.Deadlocked:
		r.ended = &DeadlockError{Now: r.k.Now(), Blocked: r.k.Blocked()}
		return r.ended
	case sched.OutOfTime:
		r.ended = &ClockError{Now: r.k.Now(), PastEnd: true, Pending: r.k.Blocked()}
		return r.ended
	case sched.Aborted: // only the instant limit aborts (host.atInstant)
		r.stuck.Pending = r.k.Blocked()
		r.ended = r.stuck
		return r.ended
	case sched.PastLimit:
		return r.horizonError()
	}
	if result != nil {
		return *result
	}
	return nil
}

// pastEnd is the error of a driver call op asked to move the clock d on,
// past MaxElapsed; nil when the clock can go there.
func (r *Runtime) pastEnd(op string, d time.Duration) error {
	room := MaxElapsed - r.k.Now()
	if d <= room {
		return nil
	}
	return fmt.Errorf("%s: d is %v: %w past the end of virtual time: the clock is at %v and goes no further than "+
		"%v (runtime.MaxElapsed, about 292 years): at most %v more", op, d, ErrClockStuck, r.k.Now(), MaxElapsed, room)
}

// Sleep waits d of virtual time. Inside an object method it lets other
// requests to the object run meanwhile (rule O3). It returns ctx's error if
// ctx is cancelled first, ErrNotInTask outside a simulated task.
func (r *Runtime) Sleep(ctx context.Context, d time.Duration) error {
	cur, err := r.k.Enter(ctx)
	if err != nil {
		return err
	}
	return cur.Sleep(ctx, d)
}

// Now returns the virtual wall clock: the start instant plus the virtual
// time elapsed.
func (r *Runtime) Now() time.Time { return r.start.Add(r.k.Now()) }

// Elapsed returns the virtual time since the runtime started, as records
// measure it.
func (r *Runtime) Elapsed() time.Duration { return r.k.Now() }

// Advance moves virtual time on by d, running whatever falls due on the way
// (alarms, timers, work in flight). Called from inside a simulated task it
// is Sleep.
//
// The clock goes no further than MaxElapsed: a d that would take it past
// is refused with an error wrapping ErrClockStuck that says how far it can
// go, and nothing runs.
func (r *Runtime) Advance(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("runtime.Advance: d is %v, must be >= 0", d)
	}
	if r.k.Driving() {
		cur := r.k.Current()
		if cur == nil {
			return ErrNotInTask
		}
		return cur.Sleep(cur.Context(), d)
	}
	if err := r.usable("runtime.Advance"); err != nil {
		return err
	}
	if err := r.pastEnd("runtime.Advance", d); err != nil {
		return err
	}
	return r.drive(r.k.Now()+d, nil)
}

// rngReader reads bytes from the seeded source, for uuid generation.
type rngReader struct{ rng *rand.Rand }

func (g rngReader) Read(p []byte) (int, error) {
	for i := 0; i < len(p); i += 8 {
		v := g.rng.Uint64()
		for j := 0; j < 8 && i+j < len(p); j++ {
			p[i+j] = byte(v >> (8 * j))
		}
	}
	return len(p), nil
}

// Callers returns the objects ("NAMESPACE/object") whose methods made
// calls of their own, sorted. A checker that replays an object's calls one
// at a time against its class alone cannot model what those calls did to
// other objects, so it leaves such histories unchecked.
func (r *Runtime) Callers() []string {
	out := make([]string, 0, len(r.callers))
	for h := range r.callers {
		out = append(out, h.ns.name+"/"+h.target.Object)
	}
	slices.Sort(out)
	return out
}

// Namespaces returns the runtime's namespaces in the order they were defined.
func (r *Runtime) Namespaces() []*Namespace { return append([]*Namespace(nil), r.namespaces...) }

// StallLimit returns the runtime's watchdog stall limit (<= 0: off).
func (r *Runtime) StallLimit() time.Duration { return r.k.StallLimit() }
