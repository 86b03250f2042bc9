package runtime

import (
	"context"
	"fmt"
	"slices"

	"github.com/dosim/dosim/internal/sched"
)

// together runs turns interleaved at their awaits, as an Interleaving
// says (rule O3): each turn's segment holds the object's input gate from
// its start, or from a waiting point at which it let the gate go, to its
// next such waiting point; there the turn waits, gate open, until its
// next segment's turn in the order, and the next segment in the order
// runs: a turn that has not started yet starts, on a task of its own,
// and one waiting at a waiting point goes on.
type together struct {
	in    *Interleaving
	pos   int            // the segment running, an index of in.Order
	reads []*turnReads   // each turn's reads, once it started
	point []int          // the waiting points each turn reached
	wake  []sched.Signal // what each waiting turn waits for
	out   []Replayed     // what each of in.Turns computed
	done  []bool         // which turns ended
}

// newTogether readies the run of in with the main turn, whose reads main
// are, running its first segment; nil when there is no interleaving.
func newTogether(main *turnReads, in *Interleaving) *together {
	if in == nil || len(in.Order) == 0 {
		return nil
	}
	n := len(in.Turns) + 1
	tg := &together{in: in, reads: make([]*turnReads, n), point: make([]int, n), wake: make([]sched.Signal, n),
		out: make([]Replayed, len(in.Turns)), done: make([]bool, n)}
	tg.reads[0] = main
	return tg
}

// outs is what each of the interleaved turns computed (nil when none ran).
func (tg *together) outs() []Replayed {
	if tg == nil {
		return nil
	}
	return tg.out
}

// running is the turn whose reads rp feeds now, -1 when none of these.
func (tg *together) running(rp *replayer) int {
	return slices.Index(tg.reads, rp.cur)
}

// await is a waiting point of the running turn: if one of its segments
// begins after it, the turn waits, gate open, for that segment's turn in
// the order, and the next segment runs now.
func (tg *together) await(r *Runtime, rp *replayer) {
	if tg == nil {
		return
	}
	i := tg.running(rp)
	if i < 0 {
		return
	}
	tg.point[i]++
	mine := Segment{Turn: i, After: tg.point[i]}
	if !slices.Contains(tg.in.Order[tg.pos+1:], mine) {
		return // the gate stayed closed here as the turns ran
	}
	waiter := r.k.Current()
	tg.wake[i] = sched.Signal{}
	tg.next(r, rp)
	tg.wake[i].Wait(context.Background(), waiter, "waiting, as it did, while the turns that came in ran")
}

// end is the end of turn i: the next segment in the order runs.
func (tg *together) end(r *Runtime, rp *replayer, i int) {
	if tg == nil {
		return
	}
	tg.done[i] = true
	tg.next(r, rp)
}

// next runs the segment after the running one: it starts its turn, or
// wakes it where it waits.
func (tg *together) next(r *Runtime, rp *replayer) {
	for tg.pos+1 < len(tg.in.Order) {
		tg.pos++
		s := tg.in.Order[tg.pos]
		switch {
		case tg.done[s.Turn]:
			continue // it ended sooner than it did in the run: unfinished says so
		case s.After == 0 && s.Turn > 0 && tg.reads[s.Turn] == nil:
			tg.start(r, rp, s.Turn)
		default:
			rp.cur = tg.reads[s.Turn]
			tg.wake[s.Turn].Fire(r.k)
		}
		return
	}
}

// start runs turn i of the interleaving, from its instant, on a task of
// its own.
func (tg *together) start(r *Runtime, rp *replayer, i int) {
	t := tg.in.Turns[i-1]
	tg.reads[i] = rp.reads(r, t)
	reads := tg.reads[i]
	r.k.Go(context.Background(), "replay: a turn that ran interleaved", func(ctx context.Context) {
		out := &tg.out[i-1]
		if d := t.At.Sub(r.start) - r.k.Now(); d > 0 {
			_ = sched.FromContext(ctx).Sleep(ctx, d)
		}
		reads.at, reads.k0 = t.At, r.k.Now()
		if err := rp.turnBody(ctx, r, t, out); err != nil {
			rp.diverge("the replay failed: " + err.Error())
			if out.Err == nil {
				out.Err = err
			}
		}
		out.Events = reads.events
		tg.end(r, rp, i)
	})
}

// unfinished says how the turns ran otherwise than the order says, once
// the replay ended ("" when they ran as it says).
func (tg *together) unfinished() string {
	if tg == nil {
		return ""
	}
	for i, d := range tg.done {
		if !d {
			return fmt.Sprintf("a turn that ran interleaved with it (%d of %d) did not end", i, len(tg.done))
		}
	}
	for _, s := range tg.in.Order {
		if s.After > tg.point[s.Turn] {
			return fmt.Sprintf("a turn that ran interleaved with it ended at waiting point %d, before the one at which it let the gate go, %d", tg.point[s.Turn], s.After)
		}
	}
	return ""
}
