package render

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// Mermaid writes the report as a Mermaid sequence diagram: the caller on
// the left, one participant per object, an arrow per attempt (crossed when
// the link lost it), a note with what the object did and the effects it
// recorded, the reply (crossed when it was lost) and each call's outcome.
// Calls that overlap in virtual time are drawn side by side in a par
// block, a branch per call (the alarms, tasks and resets of that time in
// a branch of their own); the events outside calls (alarms, retries,
// resets) are notes at their time. Times read as Go durations: 347ms,
// 1h0m1.862s.
func Mermaid(w io.Writer, r Report) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "sequenceDiagram")
	fmt.Fprintf(bw, "    title %s\n", mermaidText(r.title()))
	fmt.Fprintln(bw, "    participant C as caller")
	ids := map[string]string{}
	participant := func(name string) {
		if _, ok := ids[name]; !ok {
			ids[name] = fmt.Sprintf("O%d", len(ids)+1)
			fmt.Fprintf(bw, "    participant %s as %s\n", ids[name], mermaidText(name))
		}
	}
	for _, c := range r.Calls {
		participant(c.Namespace + "/" + c.Object)
	}
	for _, e := range r.Effects {
		participant(e.Namespace + "/" + e.Object)
	}
	for _, e := range r.Events {
		participant(e.Namespace + "/" + e.Object)
	}
	for _, ev := range mermaidLines(r) {
		fmt.Fprintln(bw, "    "+strings.ReplaceAll(ev.line, "$O", ids[ev.object]))
	}
	return bw.Flush()
}

// mermaidEvent is one line of the diagram at a virtual time.
type mermaidEvent struct {
	at     time.Duration
	seq    int // order of generation, to keep ties stable
	object string
	line   string
}

// mermaidGroup is a set of calls that overlap in virtual time, from the
// first one's start to the last one's end, with the loose events (effects
// outside a request, alarms, tasks, resets) of that time.
type mermaidGroup struct {
	start, end time.Duration
	calls      []int
	loose      []mermaidEvent
}

// mermaidLines is the diagram's lines in order: each call's, a par block
// for calls that overlap, the loose events between them.
func mermaidLines(r Report) []mermaidEvent {
	seq := 0
	perCall := make([][]mermaidEvent, len(r.Calls))
	effects := effectsOfAttempts(r.Effects)
	for i := range r.Calls {
		perCall[i] = mermaidCall(r, i, effects, &seq)
	}
	groups := mermaidGroups(r.Calls)
	var out []mermaidEvent
	for _, ev := range mermaidLoose(r, &seq) {
		if g := groupAt(groups, ev.at); g != nil {
			g.loose = append(g.loose, ev)
		} else {
			out = append(out, ev)
		}
	}
	for _, g := range groups {
		if len(g.calls) == 1 {
			out = append(out, perCall[g.calls[0]]...)
			out = append(out, g.loose...)
			continue
		}
		out = append(out, mermaidPar(r, g, perCall)...)
	}
	sortMermaid(out)
	return out
}

// mermaidPar writes a group of overlapping calls as one par block, placed
// at the group's start: a branch per call, then the loose events.
func mermaidPar(r Report, g *mermaidGroup, perCall [][]mermaidEvent) []mermaidEvent {
	first := perCall[g.calls[0]]
	at, seq := g.start, 0
	if len(first) > 0 {
		seq = first[0].seq
	}
	var out []mermaidEvent
	add := func(ev mermaidEvent) {
		ev.at, ev.seq = at, seq
		out = append(out, ev)
	}
	for k, i := range g.calls {
		word := "and"
		if k == 0 {
			word = "par"
		}
		add(mermaidEvent{line: fmt.Sprintf("%s call %d %s", word, i+1, mermaidText(r.label(i)))})
		for _, ev := range perCall[i] {
			ev.line = "    " + ev.line
			add(ev)
		}
	}
	if len(g.loose) > 0 {
		sortMermaid(g.loose)
		add(mermaidEvent{line: "and alarms, tasks and resets"})
		for _, ev := range g.loose {
			ev.line = "    " + ev.line
			add(ev)
		}
	}
	add(mermaidEvent{line: "end"})
	return out
}

// mermaidGroups groups the calls that overlap in virtual time: a call
// that starts before every call so far has ended joins their group.
func mermaidGroups(calls []runtime.CallRecord) []*mermaidGroup {
	order := make([]int, len(calls))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return calls[order[a]].Start < calls[order[b]].Start })
	var groups []*mermaidGroup
	for _, i := range order {
		c := calls[i]
		if n := len(groups); n > 0 && c.Start < groups[n-1].end {
			g := groups[n-1]
			g.calls = append(g.calls, i)
			g.end = max(g.end, c.End)
			continue
		}
		groups = append(groups, &mermaidGroup{start: c.Start, end: c.End, calls: []int{i}})
	}
	return groups
}

// groupAt returns the group of several calls whose time holds at, or nil.
func groupAt(groups []*mermaidGroup, at time.Duration) *mermaidGroup {
	for _, g := range groups {
		if len(g.calls) > 1 && g.start <= at && at < g.end {
			return g
		}
	}
	return nil
}

func sortMermaid(evs []mermaidEvent) {
	sort.SliceStable(evs, func(i, j int) bool {
		if evs[i].at != evs[j].at {
			return evs[i].at < evs[j].at
		}
		return evs[i].seq < evs[j].seq
	})
}

// effectsOfAttempts lists the effects each attempt recorded.
func effectsOfAttempts(effects []runtime.Effect) map[effectKey][]runtime.Effect {
	out := map[effectKey][]runtime.Effect{}
	for _, e := range effects {
		if e.RequestID != "" {
			k := effectKey{e.RequestID, e.Attempt}
			out[k] = append(out[k], e)
		}
	}
	return out
}

// attemptKey is the key of the effects attempt a of call c recorded: its
// own request identity (a retry may carry a new one, rule S5), else its
// call's.
func attemptKey(c runtime.CallRecord, a runtime.AttemptRecord) effectKey {
	if a.RequestID != "" {
		return effectKey{a.RequestID, a.N}
	}
	return effectKey{c.RequestID, a.N}
}

// mermaidLoose is the lines of what happened outside a call: effects
// recorded outside a request (an alarm's, a task's) and the events of
// alarms, retries, tasks and resets.
func mermaidLoose(r Report, seq *int) []mermaidEvent {
	var out []mermaidEvent
	add := func(at time.Duration, object, line string) {
		out = append(out, mermaidEvent{at: at, seq: *seq, object: object, line: line})
		*seq++
	}
	placed := map[effectKey]bool{} // the effects mermaidCall draws
	for _, c := range r.Calls {
		for _, a := range c.Attempts {
			placed[attemptKey(c, a)] = a.Fault.Reaches()
		}
	}
	for _, e := range r.Effects {
		if e.RequestID == "" || !placed[effectKey{e.RequestID, e.Attempt}] {
			add(e.At, e.Namespace+"/"+e.Object, "Note right of $O: "+effectNote(e))
		}
	}
	for _, e := range r.Events {
		note := string(e.Kind) + " at " + Ms(e.At)
		if t := e.Text(); t != "" {
			note += ": " + t
		}
		add(e.At, e.Namespace+"/"+e.Object, "Note right of $O: "+mermaidText(cutText(note, 120)))
	}
	return out
}

// effectNote is an effect as a note says it: "effect email 'hello'".
func effectNote(e runtime.Effect) string {
	return mermaidText(cutText("effect "+e.Kind+" "+Value(e.Payload), 120))
}

// cutText keeps the first n characters of s, marking a cut with "...".
func cutText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "..."
	}
	return s
}

// mermaidCall is the lines of call i: each attempt's arrow, the effects it
// recorded, what the object did, the reply, and the call's outcome.
func mermaidCall(r Report, i int, effects map[effectKey][]runtime.Effect, seq *int) []mermaidEvent {
	var evs []mermaidEvent
	c := r.Calls[i]
	obj := c.Namespace + "/" + c.Object
	add := func(at time.Duration, line string) {
		evs = append(evs, mermaidEvent{at: at, seq: *seq, object: obj, line: line})
		*seq++
	}
	for _, a := range c.Attempts {
		what := fmt.Sprintf("call %d %s, try %d at %s", i+1, r.label(i), a.N, Ms(a.Start))
		if !a.Fault.Reaches() { // the fault struck before the object
			add(a.Start, fmt.Sprintf("C-x$O: %s (%s)", mermaidText(what), a.Fault))
			continue
		}
		add(a.Start, "C->>$O: "+mermaidText(what))
		for _, e := range effects[attemptKey(c, a)] {
			add(e.At, "Note right of $O: "+effectNote(e))
		}
		if a.Cancelled {
			// The caller stopped waiting when its call ended; the object
			// may still run the attempt later (rule D3).
			add(c.End, fmt.Sprintf("Note left of C: try %d cancelled at %s", a.N, Ms(c.End)))
		}
		if a.Delivered {
			did := a.DidText()
			if a.Cancelled {
				did += " at " + Ms(a.End) + ", the caller gone"
			}
			add(a.End, "Note right of $O: "+did)
		}
		if line := mermaidReply(a); line != "" {
			add(a.End, line)
		}
	}
	outcome := c.Outcome.String()
	if c.OneShot != "" {
		outcome += ", one-shot (" + c.OneShot + ")"
	}
	if c.Err == "" && c.Result != nil {
		outcome += ", result " + Value(c.Result)
	}
	add(c.End, fmt.Sprintf("Note over C: call %d %s", i+1, mermaidText(outcome)))
	return evs
}

// mermaidReply is the arrow back for attempt a, "" when the caller had
// stopped waiting.
func mermaidReply(a runtime.AttemptRecord) string {
	switch {
	case a.Cancelled:
		return ""
	case a.Fault.Resets():
		return fmt.Sprintf("$O--xC: object reset (%s)", a.Fault)
	case a.Fault.Stage() >= transport.WhileRunning: // the fault replaced the reply
		return fmt.Sprintf("$O--xC: reply lost (%s)", a.Fault)
	case a.Rejected:
		return "$O-->>C: duplicate rejected"
	case a.Err != "":
		return "$O-->>C: error at " + Ms(a.End)
	}
	return "$O-->>C: reply at " + Ms(a.End)
}

// mermaidText makes text safe inside a Mermaid message or note: on one
// line, without the characters Mermaid reads as syntax. Entity codes
// (#quot;) are not used: not every Mermaid version decodes them in
// sequence diagrams. A double quote becomes a single one, a semicolon a
// comma, angle brackets the guillemets ‹ and ›, and a percent sign the
// full-width ％, so that no %%{init: ...}%% directive comes through a name.
func mermaidText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '"':
			b.WriteByte('\'')
		case ';':
			b.WriteByte(',')
		case '<':
			b.WriteString("‹")
		case '>':
			b.WriteString("›")
		case '%':
			b.WriteString("％")
		case '\n', '\r', '\t':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return Escape(b.String())
}
