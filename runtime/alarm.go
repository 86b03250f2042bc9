package runtime

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/dosim/dosim/internal/invoke"
	"github.com/dosim/dosim/internal/sched"
	"github.com/dosim/dosim/internal/splitmix"
	"github.com/dosim/dosim/internal/turn"
	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/object"
)

// An object has three lanes of work, each on one timer of its host: its
// alarm (rule O6), its scheduled tasks and its queue (rule A6). The alarm
// and schedule timers are background events of the scheduler: they fire
// when virtual time reaches them (Advance, or while something else waits)
// and never keep Run from returning. The queue's timer is in-flight work,
// as a sleep is: Run waits for the queue to drain, including the retries
// of Independent items on their own timers. When a timer fires, the lane's
// work runs as a
// task of its own that takes the object's input gate like a request,
// builds the object if needed, and runs one lane turn at a time. The lanes
// live on the host, not on the instance, so they survive an object reset;
// the tasks themselves are kept in the object's storage.
type lane struct {
	due     time.Duration // when the lane's next work falls due (virtual)
	has     bool          // whether it has any
	timer   sched.Timer
	armed   bool // timer is pending, for armedAt
	armedAt time.Duration
	running bool // a lane turn is in progress; it re-arms the timer when done
	stalled bool // the object could not be built: retry in the background
	// The lane's runs at one instant of one driver call (the instant
	// limit, see host.atInstant): the instant, the driver call, how many.
	instAt    time.Duration
	instDrive uint64
	instRuns  int
}

// alarmState is the object's one alarm.
type alarmState struct {
	set bool
	at  time.Duration // virtual
	// retry counts the failed deliveries so far that count against the
	// retries (0: first delivery): the handler's RetryCount, workerd's
	// countedRetry.
	retry int
	// backoff is the exponent of the next retry's wait (workerd's
	// backoff): it grows with every failed delivery, up to
	// object.AlarmBackoffCap, and starts again from 0 when a counted
	// failure follows one the infrastructure caused (infra).
	backoff int
	infra   bool // the last failed delivery was the infrastructure's
	// waiting: a failed delivery waits for its retry; first is when the
	// alarm was first due: GetAlarm returns it then (rule O6).
	waiting bool
	first   time.Duration
	// shown is the time a SetAlarm made while a failed delivery waited for
	// its retry asked for (shownSet): GetAlarm shows it, but the retry is
	// what is delivered, and nothing after it (the platform's behaviour,
	// real workerd 1.20261117.1).
	shown    time.Duration
	shownSet bool
	// gaveUp is the instance that saw the alarm given up, after its last
	// delivery failed: set is false (it never fires again), but GetAlarm
	// returns first while gaveUp is the object's live State, as the
	// platform's getAlarm does until the object is reset (rule O6).
	gaveUp *object.State
}

var laneNames = [wire.Lanes]string{"alarm", "scheduled tasks", "queue"}

// lane returns the state of lane l, making the lanes on first use: an
// object that never uses an alarm, a schedule or a queue keeps none.
func (h *host) lane(l wire.Lane) *lane {
	if h.lanes == nil {
		h.lanes = new([wire.Lanes]lane)
	}
	return &h.lanes[l]
}

// setLane records when lane is next due and sets its timer.
func (h *host) setLane(l wire.Lane, at time.Duration, ok bool) {
	ln := h.lane(l)
	ln.due, ln.has, ln.stalled = at, ok, false
	h.arm(l)
}

// arm makes the lane's timer match its due time.
func (h *host) arm(l wire.Lane) {
	ln := h.lane(l)
	k := h.ns.r.k
	if ln.running || k.Closed() || h.ns.r.replay != nil { // a replay runs one turn (Replay)
		return
	}
	if ln.armed && ln.has && ln.armedAt == ln.due {
		return
	}
	if ln.armed {
		ln.timer.Stop()
		ln.armed = false
	}
	if !ln.has {
		return
	}
	ln.armed, ln.armedAt = true, ln.due
	keepAlive := l == wire.LaneQueue && !ln.stalled
	var d time.Duration // due may be far before now (saturated at math.MinInt64): due-now would wrap
	if now := k.Now(); ln.due > now {
		d = ln.due - now
	}
	fire := func() { h.fire(l) }
	if keepAlive {
		ln.timer = k.After(d, fire)
	} else {
		ln.timer = k.Alarm(d, fire)
	}
}

// fire runs on the scheduling goroutine when a lane's timer expires.
func (h *host) fire(l wire.Lane) {
	ln := h.lane(l)
	ln.armed = false
	if ln.running {
		return
	}
	ln.running = true
	lt := &laneTurn{h: h, lane: l}
	h.ns.r.k.Go(context.Background(), laneNames[l], lt.run)
}

// laneTurn is attached to the task running a lane's work (its
// sched.Work).
type laneTurn struct {
	h     *host
	lane  wire.Lane
	holds int32    // HoldGate calls in progress (see host.leaveGate)
	log   *turnLog // the turn's history (WithHistory); nil without
}

// TurnState gives object code running in the turn its State.
func (lt *laneTurn) TurnState() *object.State { return lt.h.state }

var _ turn.Turn[*object.State] = (*laneTurn)(nil)

// String names the turn in deadlock reports.
func (lt *laneTurn) String() string {
	return fmt.Sprintf("%s/%s %s", lt.h.ns.name, lt.h.target.Object, laneNames[lt.lane])
}

func (lt *laneTurn) run(ctx context.Context) {
	h, l := lt.h, lt.lane
	t := sched.FromContext(ctx)
	t.SetWork(lt) // the watchdog may name the turn (see StallError)
	defer func() {
		if h.ns.r.k.Halted() {
			return // the run stalled under it (H1): touch nothing
		}
		h.lane(l).running = false
		h.arm(l)
		h.active() // rule L5: the idle time runs from the end of the turn
	}()
	h.gate.Acquire(t, "waiting for the object's input gate")
	defer h.release()
	h.beginLane(lt)
	defer h.endLane(lt)
	defer h.confirmWrites() // rule L7: the turn's completion is a release point
	if err := h.build(); err != nil {
		if l == wire.LaneAlarm {
			h.deliverAlarm(ctx, err)
			return
		}
		// The tasks stay in storage; try again later, in the background so
		// that a constructor that keeps failing cannot keep Run going.
		h.event(object.Event{Kind: object.EventTaskError, Lane: laneNames[l], Delay: object.AlarmRetryBase, Err: err.Error()})
		h.lane(l).due = sched.AddTime(h.ns.r.k.Now(), object.AlarmRetryBase)
		h.lane(l).stalled = true
		return
	}
	h.noteInstance(lt.log)
	if l == wire.LaneAlarm {
		h.deliverAlarm(ctx, nil)
		return
	}
	if tr, ok := h.inst.(object.TaskRunner); ok {
		tr.RunTasks(ctx, l)
		return
	}
	// Only a class that embeds agent.Agent makes tasks; this one (its code
	// changed since) cannot run them: they stay in storage, unrun.
	h.setLane(l, 0, false)
}

// deliverAlarm runs the object's Alarm handler if the alarm is due (rule
// O6). A failed delivery (an error, a panic, or setupErr: the object could
// not be built) is retried after a wait of 2 s·2^k (object.AlarmRetryWait),
// at most object.AlarmRetries times; the retry replaces any alarm the failing
// handler set. A delivery during which the object was reset failed because
// of the infrastructure: it is retried without counting (nextRetry). After
// a success the alarm stays deleted unless the handler set a new one; after
// the last failed delivery (object.AlarmRetries: the backend's) a
// key-value-backed object's GetAlarm still shows it (alarmState.gaveUp), a
// SQLite-backed one's shows none.
func (h *host) deliverAlarm(ctx context.Context, setupErr error) {
	a := &h.alarm
	r := h.ns.r
	now := r.k.Now()
	if !a.set || a.at > now {
		return // deleted or moved since the timer fired
	}
	if h.atInstant(wire.LaneAlarm) != nil {
		return // the run ends here, the alarm still set (rule H1)
	}
	prev, due := *a, a.at
	if !prev.waiting {
		prev.first = due
	}
	*a = alarmState{}
	h.lane(wire.LaneAlarm).has = false
	h.event(object.Event{Kind: object.EventAlarm, Retry: prev.retry})
	h.alarmRuns++
	err, st := setupErr, h.state
	if err == nil {
		if al, ok := h.inst.(object.Alarmer); ok {
			err = callAlarm(ctx, al, object.AlarmInfo{RetryCount: prev.retry, IsRetry: prev.retry > 0, Scheduled: r.start.Add(due)})
			err = readObjectErr(h.ns.name+"/"+h.target.Object+".Alarm", err)
		} else {
			err = fmt.Errorf("%T has no Alarm(ctx, object.AlarmInfo) error method", h.inst)
		}
	}
	infra := h.state != st // the object was reset while the handler ran
	if infra && err == nil {
		err = errors.New("the object was reset while its alarm was being delivered")
	}
	if err == nil {
		return
	}
	h.alarmFailures++
	if prev.retry >= object.AlarmRetries(h.ns.backend) {
		*a = alarmState{first: prev.first}
		// A key-value-backed object's GetAlarm still shows the alarm; a
		// SQLite-backed one's shows none (real workerd 1.20261117.1 under
		// inMemory and localDisk storage). A reset under the handler
		// renewed the instance: the new one sees none either way.
		if !infra && h.ns.backend == object.KeyValueBacked {
			a.gaveUp = h.state
		}
		h.lane(wire.LaneAlarm).has = false
		h.event(object.Event{Kind: object.EventAlarmGaveUp, Retry: prev.retry, Err: err.Error()})
		return
	}
	next := prev.nextRetry(infra)
	d := h.alarmWait(next.backoff-1, next.retry, r.start.Add(due))
	next.set, next.at, next.waiting = true, sched.AddTime(now, d), true
	*a = next
	h.lane(wire.LaneAlarm).due, h.lane(wire.LaneAlarm).has = a.at, true
	ev := object.Event{Kind: object.EventAlarmRetry, Retry: next.retry, Delay: d, Err: err.Error()}
	if infra {
		ev.Note = "infrastructure"
	}
	h.event(ev)
}

// nextRetry is the alarm's retry state after a failed delivery, as
// workerd's alarm scheduler keeps it: a failure the handler caused counts
// against the retries (and its backoff starts again from 0 after one the
// infrastructure caused); one the infrastructure caused does not. The
// backoff exponent used for the wait is the result's backoff-1, capped.
func (a alarmState) nextRetry(infra bool) alarmState {
	n := alarmState{retry: a.retry, backoff: a.backoff, infra: infra, first: a.first}
	if !infra {
		n.retry++
		if a.waiting && a.infra {
			n.backoff = 0
		}
	}
	n.backoff = min(n.backoff, object.AlarmBackoffCap) + 1
	return n
}

// alarmWait is the wait before the alarm's retry number retry, with
// backoff exponent k: object.AlarmRetryWait, and, in a SQLite-backed
// namespace, a jitter of up to a quarter of it on top (rule O6). The
// jitter is the seed's, hashed with the object's ID, the instant the
// failed delivery was due and the retry number; it is not a draw from the
// runtime's source, so it moves no other draw, and a replay of the turn
// (rule C1), which knows the run's seed (Turn.Seed), computes the same
// wait the run did.
//
// The platform's, measured on real workerd 1.20261117.1: under localDisk
// storage (a SQLite-backed class) 74 waits of 30 always-failing alarms
// were 0.2% to 24.6% longer than 2 s·2^k, spread evenly (workerd's
// alarm-scheduler.c++: RETRY_JITTER_FACTOR, 0.25); under inMemory storage
// (a key-value-backed class) they were exact.
func (h *host) alarmWait(k, retry int, due time.Time) time.Duration {
	d := object.AlarmRetryWait(k)
	if h.ns.backend == object.KeyValueBacked {
		return d
	}
	id := h.id.Bytes()
	x := h.ns.r.alarmSeed ^ binary.LittleEndian.Uint64(id[:8]) ^ binary.LittleEndian.Uint64(id[8:16])
	x = splitmix.Hash(splitmix.Hash(x^uint64(due.UnixNano())) + uint64(retry))
	return d + time.Duration(x%uint64(d/object.AlarmJitterDivisor))
}

// callAlarm runs the handler; a panic is returned as an error.
func callAlarm(ctx context.Context, al object.Alarmer, info object.AlarmInfo) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &invoke.Panic{Value: p, Stack: debug.Stack()}
		}
	}()
	return al.Alarm(ctx, info)
}

// setAlarm sets (ok) or deletes the object's alarm; at is virtual.
func (h *host) setAlarm(at time.Duration, ok bool) {
	h.alarm = alarmState{set: ok, at: at}
	h.setLane(wire.LaneAlarm, at, ok)
}

// atInstant counts a background run of lane l (an alarm delivery, a
// scheduled or queued task's run) at the current instant and returns nil
// while the runs of this instant, in this driver call, are within the
// runtime's instant limit (WithInstantLimit, rule H1). Past it, the run
// must not happen: it returns the *ClockError that ends the driver call,
// and has the kernel end it at the next switch (Kernel.Abort). Runs of
// earlier driver calls do not count: Run after Run at one instant is
// finite work.
func (h *host) atInstant(l wire.Lane) error {
	r := h.ns.r
	ln := h.lane(l)
	if now := r.k.Now(); ln.instAt != now || ln.instDrive != r.drives {
		ln.instAt, ln.instDrive, ln.instRuns = now, r.drives, 0
	}
	ln.instRuns++
	if r.instantLimit <= 0 || ln.instRuns <= r.instantLimit {
		return nil
	}
	if r.stuck == nil { // the first past the limit ends the driver call
		r.stuck = &ClockError{Now: r.k.Now(), Object: h.ns.name + "/" + h.target.Object, Limit: r.instantLimit}
		r.k.Abort()
	}
	return r.stuck
}
