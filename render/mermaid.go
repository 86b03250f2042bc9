package render

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/dosim/dosim/transport"
)

// Mermaid writes the report as a Mermaid sequence diagram: the caller on
// the left, one participant per object, an arrow per attempt (crossed when
// the link lost it), a note with what the object did, the reply (crossed
// when it was lost) and each call's outcome.
func Mermaid(w io.Writer, r Report) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "sequenceDiagram")
	fmt.Fprintf(bw, "    title %s\n", mermaidText(r.title()))
	fmt.Fprintln(bw, "    participant C as caller")
	ids := map[string]string{}
	for _, c := range r.Calls {
		name := c.Namespace + "/" + c.Object
		if _, ok := ids[name]; !ok {
			ids[name] = fmt.Sprintf("O%d", len(ids)+1)
			fmt.Fprintf(bw, "    participant %s as %s\n", ids[name], mermaidText(name))
		}
	}
	for _, ev := range mermaidEvents(r) {
		line := strings.ReplaceAll(ev.line, "$O", ids[ev.object])
		fmt.Fprintln(bw, "    "+line)
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

func mermaidEvents(r Report) []mermaidEvent {
	var evs []mermaidEvent
	add := func(at time.Duration, object, line string) {
		evs = append(evs, mermaidEvent{at: at, seq: len(evs), object: object, line: line})
	}
	for i, c := range r.Calls {
		obj := c.Namespace + "/" + c.Object
		for _, a := range c.Attempts {
			what := fmt.Sprintf("call %d %s, try %d at %s", i+1, r.label(i), a.N, Ms(a.Start))
			if !a.Fault.Reaches() { // the fault struck before the object
				add(a.Start, obj, fmt.Sprintf("C-x$O: %s (%s)", mermaidText(what), a.Fault))
				continue
			}
			add(a.Start, obj, "C->>$O: "+mermaidText(what))
			if a.Cancelled {
				// The caller stopped waiting when its call ended; the object
				// may still run the attempt later (rule D3).
				add(c.End, obj, fmt.Sprintf("Note left of C: try %d cancelled at %s", a.N, Ms(c.End)))
			}
			if a.Delivered {
				did := a.DidText()
				if a.Cancelled {
					did += " at " + Ms(a.End) + ", the caller gone"
				}
				add(a.End, obj, "Note right of $O: "+did)
			}
			reply := "reply at " + Ms(a.End)
			switch {
			case a.Cancelled:
				continue
			case a.Fault.Resets():
				add(a.End, obj, fmt.Sprintf("$O--xC: object reset (%s)", a.Fault))
				continue
			case a.Fault.Stage() >= transport.WhileRunning: // the fault replaced the reply
				add(a.End, obj, fmt.Sprintf("$O--xC: reply lost (%s)", a.Fault))
				continue
			case a.Rejected:
				reply = "duplicate rejected"
			case a.Err != "":
				reply = "error at " + Ms(a.End)
			}
			add(a.End, obj, "$O-->>C: "+reply)
		}
		outcome := c.Outcome.String()
		if c.OneShot != "" {
			outcome += ", one-shot (" + c.OneShot + ")"
		}
		if c.Err == "" && c.Result != nil {
			outcome += ", result " + Value(c.Result)
		}
		add(c.End, obj, fmt.Sprintf("Note over C: call %d %s", i+1, mermaidText(outcome)))
	}
	sort.SliceStable(evs, func(i, j int) bool {
		if evs[i].at != evs[j].at {
			return evs[i].at < evs[j].at
		}
		return evs[i].seq < evs[j].seq
	})
	return evs
}

// mermaidText makes text safe inside a Mermaid message or note: on one
// line, without the characters Mermaid reads as syntax. Entity codes
// (#quot;) are not used: not every Mermaid version decodes them in
// sequence diagrams. A double quote becomes a single one, a semicolon a
// comma, angle brackets the guillemets ‹ and ›.
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
		case '\n', '\r', '\t':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return Escape(b.String())
}
