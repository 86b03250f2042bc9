package runtime

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/dosim/dosim/internal/layout"
)

// Trace renders every call and attempt as text, one line each, with full
// request identities (an attempt's only where it is not its call's, rule
// S5): the same seed, program and faults give the same
// trace, byte for byte (rule D1).
func (r *Runtime) Trace() string {
	var b strings.Builder
	for i, c := range r.Calls() {
		fmt.Fprintf(&b, "call %d %s %s/%s.%s start=%v end=%v subrequests=%d outcome=%s err=%q\n",
			i+1, c.RequestID, c.Namespace, c.Object, c.Method, c.Start, c.End, c.Subrequests, c.Outcome, c.Err)
		for _, a := range c.Attempts {
			fmt.Fprintf(&b, "  attempt %d start=%v end=%v fault=%s delivered=%t executed=%t rejected=%t cancelled=%t err=%q",
				a.N, a.Start, a.End, a.Fault, a.Delivered, a.Executed, a.Rejected, a.Cancelled, a.Err)
			if a.RequestID != c.RequestID { // S5: an attempt known not to have reached the object, before a new identity
				fmt.Fprintf(&b, " request=%s", a.RequestID)
			}
			b.WriteByte('\n')
		}
	}
	for _, e := range r.effects {
		fmt.Fprintf(&b, "effect at=%v %s/%s %s %v request=%s attempt=%d\n", e.At, e.Namespace, e.Object, e.Kind, e.Payload, e.RequestID, e.Attempt)
	}
	for _, e := range r.events.all() {
		fmt.Fprintf(&b, "event at=%v %s/%s %s %s\n", e.At, e.Namespace, e.Object, e.Kind, e.Text())
	}
	return b.String()
}

// WriteTable writes calls as a table a person reads: a row per call, then a
// row per attempt with its virtual times, what the link did, and what the
// object did. Columns are two spaces apart and lines carry no trailing
// blanks; the timeline of render.Text lays out its columns the same way
// (both use internal/layout).
func WriteTable(w io.Writer, calls []CallRecord) error {
	text := func(s ...string) []layout.Cell {
		cells := make([]layout.Cell, len(s))
		for i, t := range s {
			cells[i].Text = t
		}
		return cells
	}
	rows := []layout.Row{{Cells: text("CALL", "OBJECT", "METHOD", "ATTEMPT", "START", "END", "LINK", "OBJECT DID", "RESULT")}}
	for i, c := range calls {
		result := c.Outcome.String()
		if c.Err != "" {
			result += ": " + c.Err
		}
		rows = append(rows, layout.Row{Cells: text(fmt.Sprint(i+1), c.Namespace+"/"+c.Object, c.Method, "",
			layout.Ms(c.Start), layout.Ms(c.End), "", "", result)})
		for _, a := range c.Attempts {
			rows = append(rows, layout.Row{Cells: text("", "", "", fmt.Sprint(a.N),
				layout.Ms(a.Start), layout.Ms(a.End), a.LinkText(), a.DidText())})
		}
	}
	var buf bytes.Buffer
	if err := layout.Write(&buf, rows, nil); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		if line == "" {
			continue
		}
		if _, err := io.WriteString(w, strings.TrimRight(line, " \n")+"\n"); err != nil {
			return err
		}
	}
	return nil
}
