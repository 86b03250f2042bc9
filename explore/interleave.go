package explore

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
)

// Interleavings at awaits (rules O3, C2). The model applies each turn as
// one atomic step, and that is the contract most Durable Object code
// means: a turn that reads, awaits and then writes has let other requests
// in at the await (the input gate opens for it), and a history only such
// an interleaving explains is a check-then-act race. But some code is
// meant to interleave there (a batch sent upstream while new messages
// arrive). When no order of atomic steps explains a history, the check
// looks for the turns that came in during another's await and ran whole
// within it, and checks the history again with each such group replayed
// as it ran: the awaiting turn, with the others run at its waiting point
// (runtime.Injection). If that explains it, the violation is of kind
// interleaving, and names the turn, its await and the turns that came in;
// when the awaiting turn is one the options declare meant to interleave
// (Options.Interleaving), it is no violation: the user's own expectations
// judge it.

// KindInterleaving is the kind of a history that no order of its turns as
// atomic steps explains, but the interleaving at an await as it ran does:
// a turn let its object's input gate go while it waited, and others came
// in (rule O3).
const KindInterleaving = "interleaving"

// ofHistory reports whether a violation of kind is one of an object's
// history: linearizability or interleaving.
func ofHistory(kind string) bool { return kind == KindLinearizability || kind == KindInterleaving }

// awaitGroup is operations whose turns ran interleaved at their awaits:
// each but the first (by its start) began during a wait of another's.
// head is the first's index, in the others', by their starts; at is the
// head's first wait during which another began.
type awaitGroup struct {
	head int
	in   []int
	at   runtime.Await
}

// interleavings finds h's operations whose turns ran interleaved at their
// awaits, grouped: a turn that began during another's wait is in its
// group. ok is false when one of a group ran more than once (a retry): the
// group is replayed as it ran, one turn each. A turn cut short is
// replayed whole: if what it did is not what its cut left, the replay
// explains nothing.
func interleavings(h *objHistory) (groups []awaitGroup, ok bool) {
	n := len(h.ops)
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	root := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	joined := false
	for i := range h.ops {
		for _, w := range h.ops[i].first.turn.Awaits {
			for j := range h.ops {
				if j == i || w.Ended == 0 || !slices.ContainsFunc(h.ops[j].alts(), func(x *alt) bool { return x.turn.Began > w.Began && x.turn.Began < w.Ended }) {
					continue
				}
				parent[root(j)], joined = root(i), true
			}
		}
	}
	if !joined {
		return nil, true
	}
	members := map[int][]int{}
	for i := range h.ops {
		members[root(i)] = append(members[root(i)], i)
	}
	for _, m := range members {
		if len(m) < 2 {
			continue
		}
		for _, i := range m {
			if h.ops[i].nalts() > 1 {
				return nil, false
			}
		}
		slices.SortFunc(m, func(a, b int) int { return cmp.Compare(h.ops[a].first.turn.Began, h.ops[b].first.turn.Began) })
		g := awaitGroup{head: m[0], in: m[1:]}
		g.at = firstWait(h, m)
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(a, b awaitGroup) int { return cmp.Compare(a.head, b.head) })
	return groups, true
}

// firstWait is the first wait, among the turns of the operations m, during
// which another of them began.
func firstWait(h *objHistory, m []int) runtime.Await {
	var best runtime.Await
	for _, i := range m {
		for _, w := range h.ops[i].first.turn.Awaits {
			for _, j := range m {
				b := h.ops[j].first.turn.Began
				if j != i && b > w.Began && b < w.Ended && (best.Began == 0 || w.Began < best.Began) {
					best = w
				}
			}
		}
	}
	return best
}

// alts returns op's alternatives.
func (op *hop) alts() []*alt {
	out := make([]*alt, op.nalts())
	for i := range out {
		out[i] = op.alt(i)
	}
	return out
}

// interleaved is h with each group one operation: its turns replayed as
// they ran, interleaved at their awaits, spanning them all, its output
// theirs.
func (h *objHistory) interleaved(groups []awaitGroup) *objHistory {
	out := *h
	out.ops = make([]hop, 0, len(h.ops))
	gone := map[int]bool{}
	heads := map[int]awaitGroup{}
	for _, g := range groups {
		heads[g.head] = g
		for _, j := range g.in {
			gone[j] = true
		}
	}
	for i := range h.ops {
		if gone[i] {
			continue
		}
		g, ok := heads[i]
		if !ok {
			out.ops = append(out.ops, h.ops[i])
			continue
		}
		out.ops = append(out.ops, h.group(g))
	}
	return &out
}

// group is the operation of group g (see interleaved).
func (h *objHistory) group(g awaitGroup) hop {
	op := h.ops[g.head]
	op.first.others = nil // the replay makes every call out of them all
	op.maybe = false      // applied as it ran
	op.parts = []seen{op.seen}
	turns := []*runtime.Turn{op.first.turn}
	input := "I " + op.first.input
	for _, j := range g.in {
		b := &h.ops[j]
		t := b.first.turn
		turns = append(turns, t)
		op.parts = append(op.parts, b.seen)
		op.calls = append(op.calls, b.calls...)
		op.from, op.to = min(op.from, b.from), max(op.to, b.to)
		op.injected = append(op.injected, b)
		input += fmt.Sprintf(" | %s @%d.%d.%d.%d.%d %q", b.first.input, t.At.UnixNano(), t.Call, t.Attempt, t.Kind, t.Instance, t.Cut)
	}
	op.first.together = runtime.InterleavingOf(turns)
	for _, s := range op.first.together.Order {
		input += fmt.Sprintf(" %d:%d", s.Turn, s.After)
	}
	op.first.input = input
	op.seen = seen{known: true}
	return op
}

// matches reports whether the output out of a step of op is what its
// caller saw: for a group (see interleaved), each part that was seen.
func (op *hop) matches(out string) bool {
	if op.parts == nil {
		return !op.seen.known || out == op.seen.key
	}
	got := strings.Split(out, partSep)
	if len(got) != len(op.parts) {
		return false
	}
	for i, p := range op.parts {
		if p.known && got[i] != p.key {
			return false
		}
	}
	return true
}

// partSep separates the outputs of a group's turns in its step's output.
const partSep = "\x1e"

// groupOut is the output of a step that replayed a group: its first
// turn's and, after it, each other turn's.
func groupOut(a *alt, rep runtime.Replayed) string {
	var b strings.Builder
	b.WriteString(replayedKey(a.turn, rep))
	for i, t := range a.together.Turns {
		var part runtime.Replayed
		if i < len(rep.Together) {
			part = rep.Together[i]
		}
		b.WriteString(partSep)
		b.WriteString(replayedKey(t, part))
	}
	return b.String()
}

// declared are the turns the options declare meant to interleave
// (Options.Interleaving): a method's name ("Flush"), qualified by its
// namespace or not ("OUTBOX.Flush"), "fetch" for fetch handlers, and
// "alarm", "schedule" and "queue" for background turns.
type declared []string

// has reports whether the turn of op is declared meant to interleave.
func (d declared) has(ns string, op *hop) bool {
	t := op.turn
	name := t.Kind.String()
	switch {
	case t.Kind != runtime.TurnRequest:
	case t.Fetch != nil:
		name = "fetch"
	default:
		name = op.call.Method
	}
	return slices.Contains(d, name) || slices.Contains(d, ns+"."+name)
}

// interleavingDefaults checks the names of Interleaving and adds the
// scenario's explore.interleaving to them, sorted, each once. A name is
// a method (Method, or NAMESPACE.Method), fetch, alarm, schedule or queue;
// with a scenario, a method of one of its namespaces' classes.
func (o *Options) interleavingDefaults(sc *scenario.Scenario) error {
	for _, name := range o.Interleaving {
		if !validTurnName(name) || (sc != nil && !sc.NamesTurns(name)) {
			want := "a method (Method or NAMESPACE.Method), fetch, alarm, schedule or queue"
			if sc != nil {
				want = "a method of a namespace's class of " + sc.File + " (Method or NAMESPACE.Method), fetch, alarm, schedule or queue"
			}
			return fmt.Errorf("%w: interleaving %q: want %s", ErrOptions, name, want)
		}
	}
	names := slices.Clone(o.Interleaving)
	if sc != nil {
		names = append(names, sc.Explore.Interleaving...)
	}
	slices.Sort(names)
	o.Interleaving = slices.Compact(names)
	if len(o.Interleaving) == 0 {
		o.Interleaving = nil
	}
	return nil
}

// validTurnName reports whether name can name turns: one or two words of
// letters, digits and _, joined by a dot.
func validTurnName(name string) bool {
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.IndexFunc(p, func(r rune) bool { return !(r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) }) >= 0 {
			return false
		}
	}
	return true
}

// interleavingText is the message of a violation of kind interleaving:
// the first group's turns, the wait during which another came in, and
// what the user can do.
func interleavingText(h *objHistory, groups []awaitGroup) string {
	g := groups[0]
	var others []string
	waiter := ""
	for _, i := range append([]int{g.head}, g.in...) {
		op := &h.ops[i]
		if waiter == "" && slices.Contains(op.first.turn.Awaits, g.at) {
			waiter = op.label()
			continue
		}
		others = append(others, op.label())
	}
	s := fmt.Sprintf("no order of its %s as atomic steps explains what callers saw and its end state, but its turns interleaved at their awaits as they ran do: %s let the object's input gate go while it waited for %s (its waiting point %d), and %s ran meanwhile",
		opsText(h.ops), waiter, g.at.What, g.at.Point, strings.Join(others, ", "))
	if n := len(groups) - 1; n > 0 {
		s += " (and " + plural(n, "more such interleaving") + ")"
	}
	return s + ". If they must not interleave, keep the gate closed across the wait (State.BlockConcurrencyWhile) or read again after it; if they are meant to, declare it (explore.Options.Interleaving, dosim explore --interleaving, explore.interleaving in a scenario) and check what must hold with your own expectations"
}
