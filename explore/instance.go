package explore

import "github.com/dosim/dosim/runtime"

// What the model keeps of an object's instance (rule C2): the instance a
// state holds, the line of turns that rebuilds it, and the replay sessions
// a check keeps live so that it need not be rebuilt at every step.

// instance is an object's instance as the model keeps it: which one it
// is (runtime.Turn.Instance), what it keeps (runtime.Replayed.Memory) and
// how to build it again: the state it was built over and the last turn it
// ran, whose line goes back to the first.
type instance struct {
	n      int
	memory string
	base   runtime.ObjectState
	last   *line
}

// line is one turn an instance ran, run interleaved with others as
// together says (nil: alone), after the turns of prev. The instances of a
// history's states share their lines: each new state adds one, so that
// keeping instances costs memory in the states, not in the square of the
// turns.
type line struct {
	turn     *runtime.Turn
	together *runtime.Interleaving
	prev     *line
	n        int // the turns up to this one
}

// lineage is the instance's turns, as runtime.ReplayAfter replays them.
func (inst *instance) lineage() runtime.Lineage {
	l := runtime.Lineage{Base: inst.base}
	if inst.last == nil {
		return l
	}
	l.Turns = make([]*runtime.Turn, inst.last.n)
	var together []*runtime.Interleaving
	for x := inst.last; x != nil; x = x.prev {
		l.Turns[x.n-1] = x.turn
		if x.together != nil {
			if together == nil {
				together = make([]*runtime.Interleaving, inst.last.n)
			}
			together[x.n-1] = x.together
		}
	}
	l.Together = together
	return l
}

// then is inst's line followed by turn t, run interleaved with others as
// in says (nil: alone); a fresh instance's (inst nil) begins with t.
func (inst *instance) then(t *runtime.Turn, in *runtime.Interleaving) *line {
	x := &line{turn: t, together: in, n: 1}
	if inst != nil && inst.last != nil {
		x.prev, x.n = inst.last, inst.last.n+1
	}
	return x
}

// liveSessions keeps, for one check, the replay sessions of the states
// its steps reached (runtime.Session): a step from such a state, of a turn
// of the instance the session holds, runs on the session instead of
// building the instance again over the state (and replaying the turns it
// ran before, for a class that keeps fields), so that a history of n
// turns on one instance costs n replays, not n²/2, and none of them
// restores storage (BenchmarkCheckInstance). A session is used once: a
// second step from the same state builds its own. At most maxLive are
// kept (each holds a goroutine and the object's storage), and close frees
// them all when the check ends. What a step computes is the same with a
// session or without: the model's memo returns one or the other.
type liveSessions struct {
	by    map[*state]live
	order []*state
}

// live is a kept session and the instance (runtime.Turn.Instance) it holds.
type live struct {
	sess *runtime.Session
	inst int
}

// maxLive bounds the sessions one check keeps.
const maxLive = 8

// take returns the session kept for s, if it holds instance inst, and
// forgets it.
func (l *liveSessions) take(s *state, inst int) *runtime.Session {
	if l == nil || l.by == nil {
		return nil
	}
	x, ok := l.by[s]
	if !ok || x.inst != inst {
		return nil
	}
	delete(l.by, s)
	return x.sess
}

// keep keeps sess, which holds instance inst, for s (closing it if s has
// one already), closing the oldest kept when there are too many.
func (l *liveSessions) keep(s *state, sess *runtime.Session, inst int) {
	if sess == nil {
		return
	}
	if _, has := l.by[s]; l == nil || has {
		sess.Close()
		return
	}
	if l.by == nil {
		l.by = map[*state]live{}
	}
	for len(l.by) >= maxLive && len(l.order) > 0 {
		old := l.order[0]
		l.order = l.order[1:]
		if x, ok := l.by[old]; ok {
			delete(l.by, old)
			x.sess.Close()
		}
	}
	l.by[s] = live{sess, inst}
	l.order = append(l.order, s)
}

// close frees every session kept.
func (l *liveSessions) close() {
	for _, x := range l.by {
		x.sess.Close()
	}
	l.by, l.order = nil, nil
}
