package sched

import (
	"math"
	"time"
)

// End is the end of virtual time: time.Duration's largest value, about
// 292 years after the kernel started. Nothing happens at End or later: the
// last instant is End-1.
//
// The kernel saturates rather than refuses. A wait that would end at or
// past End (a sleep, a timer, a timeout, a link delay: now plus a duration
// near math.MaxInt64, or sleeps that add up past 292 years) is a wait
// until End, and End never comes. Until then it is a wait like any other:
// time moves on for it, through the background work on the way, and its
// context can end it (a sleep "until cancelled" works). A driver call left
// with nothing but such waits stops with OutOfTime (the runtime makes it a
// *runtime.ClockError naming them) instead of wrapping around to a past instant,
// which made the wait end at once and froze the clock. Refusing the
// duration instead would hand the caller an error that a loop which
// ignores it turns into a spin at one instant, the very hang this
// prevents. Driver calls are the exception: their target is refused past
// End (Drive), as the caller asks to move the clock there and nothing
// could.
const End = time.Duration(math.MaxInt64)

// AddTime returns at+d, saturated at End (d < 0 adds nothing): the instant
// a wait of d from at ends, End meaning never.
func AddTime(at, d time.Duration) time.Duration {
	switch {
	case d <= 0:
		return at
	case d >= End-at:
		return End
	}
	return at + d
}

// callback is a function run on the scheduling goroutine at an instant.
type callback struct {
	fn        func()
	keepAlive bool
	cancelled bool
	fired     bool
}

// Timer cancels a callback scheduled with After, Alarm or Background.
type Timer struct {
	k  *Kernel
	cb *callback
}

// Stop cancels the callback if it has not run yet and reports whether it did so.
func (tm Timer) Stop() bool {
	if tm.cb == nil || tm.cb.fired || tm.cb.cancelled {
		return false
	}
	tm.cb.cancelled = true
	if tm.cb.keepAlive {
		tm.k.keepAlive--
	}
	return true
}

// The kernel runs callbacks of three kinds, each by its own method. All
// run fn on the scheduling goroutine when virtual time reaches now+d; fn
// must not block, and may start tasks and ready them.
//
//   - After: in-flight work (link latency) waits for it, so time moves to
//     it on its own.
//   - Alarm: background work (an object's alarm, a context's deadline): it
//     runs only when time gets there because something else waits longer.
//   - Background: housekeeping, as Alarm but after every other event of its
//     instant and without a seeded draw (see Background).
//
// A callback due at or past End never runs (see End); if in-flight work
// waits for it (After), time moves on towards End meanwhile, and a driver
// call left with nothing else stops with OutOfTime.

// After runs fn when virtual time reaches now+d, in-flight work that keeps
// the run going until then (see the kinds of callback above).
func (k *Kernel) After(d time.Duration, fn func()) Timer { return k.after(d, true, fn) }

// Alarm runs fn when virtual time reaches now+d, background work that does
// not move time on its own (see the kinds of callback above).
func (k *Kernel) Alarm(d time.Duration, fn func()) Timer { return k.after(d, false, fn) }

// after is After (keepAlive) and Alarm: both draw a seeded tie-break.
func (k *Kernel) after(d time.Duration, keepAlive bool, fn func()) Timer {
	d = max(d, 0)
	cb := &callback{fn: fn, keepAlive: keepAlive}
	at := AddTime(k.now, d)
	if at == End && !keepAlive {
		return Timer{k: k, cb: cb} // never runs, and nothing waits for it
	}
	if keepAlive {
		k.keepAlive++
	}
	k.pushCallback(event{at: at, kind: evCallback, ref: k.hold(cb), keepAlive: keepAlive})
	return Timer{k: k, cb: cb}
}

// FireAfter fires s when virtual time reaches now+d: After(d, func() {
// s.Fire(k) }), the same event with the same seeded draw, but it allocates
// nothing and cannot be stopped. It is a speed trick for a reply's latency
// (one per reply of a sweep's runs, runtime's host.reply), justified by
// BenchmarkFireAfter.
func (k *Kernel) FireAfter(d time.Duration, s *Signal) {
	at := AddTime(k.now, max(d, 0))
	k.keepAlive++
	k.pushCallback(event{at: at, kind: evFire, ref: k.hold(s), keepAlive: true})
}

// Background runs fn on the scheduling goroutine when virtual time reaches
// now+d, as Alarm does, but draws no seeded tie-break: it
// runs after every other event of its instant (Background callbacks of
// one instant run in the order they were scheduled), and scheduling it
// leaves the seeded sequence (and so every trace) as it was. For housekeeping
// that must not disturb a run, such as evicting an idle object.
func (k *Kernel) Background(d time.Duration, fn func()) Timer {
	d = max(d, 0)
	cb := &callback{fn: fn}
	if d >= End-k.now {
		return Timer{k: k, cb: cb} // never runs (see End)
	}
	k.bgSeq++
	k.pushAt(event{at: k.now + d, kind: evCallback, ref: k.hold(cb), prio: 1<<63 | k.bgSeq})
	return Timer{k: k, cb: cb}
}
