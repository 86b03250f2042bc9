package sched

import "time"

// DefaultStallLimit is the stall limit of a new kernel: how long, in wall
// clock time, a task may run without reaching a simulation blocking point
// (a sleep, a call, a wait, its end) before the run is declared stalled.
// An honest turn runs for microseconds, milliseconds at worst under the race
// detector on a loaded machine; ten seconds is thousands of times that, and
// still ends a hung test well inside go test's default ten-minute timeout.
const DefaultStallLimit = 10 * time.Second

// MinStallLimit is the least stall limit the watchdog takes (a limit of 0
// or less turns it off). Below it the wall clock of a busy machine, not
// the simulated code, decides a run: a collection pause, or a process the
// operating system left waiting for a few milliseconds, looks like a task
// that stopped reaching blocking points, and a seed fails or passes by
// the machine's load. A tenth of a second is a hundred times the slowest
// honest turn (a few milliseconds under the race detector on a loaded
// machine), and still ends a test of a hang at once.
const MinStallLimit = 100 * time.Millisecond

// CheckStallLimit returns an error that is ErrStallLimit (errors.Is) for a
// limit the watchdog does not take: above 0 and below MinStallLimit. It
// names the value and what is allowed.
func CheckStallLimit(d time.Duration) error {
	if d > 0 && d < MinStallLimit {
		return stallLimitError{d}
	}
	return nil
}

// SetStallLimit sets the watchdog's wall-clock stall limit; d <= 0 turns
// the watchdog off. A limit below MinStallLimit is refused (the limit
// stays as it was) with an error wrapping ErrStallLimit. The watchdog
// reads the wall clock only to end a hang: it never changes what a run
// that does not stall computes.
func (k *Kernel) SetStallLimit(d time.Duration) error {
	if err := CheckStallLimit(d); err != nil {
		return err
	}
	k.stallLimit = d
	return nil
}

// StallLimit returns the watchdog's stall limit (<= 0: off).
func (k *Kernel) StallLimit() time.Duration { return k.stallLimit }

// Halted reports whether a stall was declared. Any goroutine may call it.
func (k *Kernel) Halted() bool { return k.halted.Load() }

// wait waits for the tasks to hand the processor back to the driver. With
// a stall limit it also watches the switch counter on a wall-clock ticker
// and declares a stall when it has not moved for the limit. The wall clock
// only decides when to give up on a hang: a run that does not stall never
// notices the watchdog.
//
// The counter is what makes the driver's reads of the kernel (stall, then
// Close) race-free. The goroutine that hands the processor over bumps it
// last, just before the wake-up it sends (resume), so after everything it
// wrote that the driver reads: the clock, the running task, its worker,
// the live list. The driver declares a stall only when its last load of
// the counter saw the latest bump, and so reads all of that after it.
// (Bumped before resume wrote the task's worker and the live list, as it
// was, the driver read them unordered.) A task's own write the driver
// reads (its Work, which names it in the report) is published the same
// way, by SetWork.
func (k *Kernel) wait() (Stop, error) {
	limit := k.stallLimit
	if limit <= 0 {
		return <-k.driver, nil
	}
	period := min(max(limit/4, time.Millisecond), time.Second)
	tick := time.NewTicker(period)
	defer tick.Stop()
	last, since, idle := k.switches.Load(), time.Now(), 0
	for {
		select {
		case stop := <-k.driver:
			return stop, nil
		case now := <-tick.C:
			if n := k.switches.Load(); n != last {
				last, since, idle = n, now, 0
				continue
			}
			// Several quiet ticks as well as the time: a process frozen by
			// an overloaded machine wakes to one late tick, not four.
			if idle++; idle < 4 || now.Sub(since) < limit {
				continue
			}
			return Stalled, k.stall(limit)
		}
	}
}

// stall halts the kernel: the running task's goroutine is left to itself
// (it cannot be stopped from outside), everything else stays parked until
// Close ends it.
func (k *Kernel) stall(limit time.Duration) error {
	k.halted.Store(true)
	t := k.cur.Load()
	k.stuck = t
	if t != nil && t.w != nil {
		t.w.done() // Close must not wait for it
	}
	return &Stall{Task: k.describe(t), Now: k.now, Limit: limit}
}
