package runtime

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Trace renders every call and attempt as text, one line each, with full
// request identities: the same seed, program and faults give the same
// trace, byte for byte (rule D1).
func (r *Runtime) Trace() string {
	var b strings.Builder
	for i, c := range r.Calls() {
		fmt.Fprintf(&b, "call %d %s %s/%s.%s start=%v end=%v subrequests=%d outcome=%s err=%q\n",
			i+1, c.RequestID, c.Namespace, c.Object, c.Method, c.Start, c.End, c.Subrequests, c.Outcome, c.Err)
		for _, a := range c.Attempts {
			fmt.Fprintf(&b, "  attempt %d start=%v end=%v fault=%s delivered=%t executed=%t rejected=%t cancelled=%t err=%q\n",
				a.N, a.Start, a.End, a.Fault, a.Delivered, a.Executed, a.Rejected, a.Cancelled, a.Err)
		}
	}
	for _, e := range r.effects {
		fmt.Fprintf(&b, "effect at=%v %s/%s %s %v request=%s attempt=%d\n", e.At, e.Namespace, e.Object, e.Kind, e.Payload, e.RequestID, e.Attempt)
	}
	for _, e := range r.events {
		fmt.Fprintf(&b, "event at=%v %s/%s %s %s\n", e.At, e.Namespace, e.Object, e.Kind, e.Detail)
	}
	return b.String()
}

// WriteTable writes calls as a table a person reads: a row per call, then a
// row per attempt with its virtual times, what the link did, and what the
// object did.
func WriteTable(w io.Writer, calls []CallRecord) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CALL\tOBJECT\tMETHOD\tATTEMPT\tSTART\tEND\tLINK\tOBJECT DID\tRESULT")
	for i, c := range calls {
		result := c.Outcome.String()
		if c.Err != "" {
			result += ": " + c.Err
		}
		fmt.Fprintf(tw, "%d\t%s/%s\t%s\t\t%s\t%s\t\t\t%s\n", i+1, c.Namespace, c.Object, c.Method, ms(c.Start), ms(c.End), result)
		for _, a := range c.Attempts {
			fmt.Fprintf(tw, "\t\t\t%d\t%s\t%s\t%s\t%s\t\n", a.N, ms(a.Start), ms(a.End), a.LinkText(), a.DidText())
		}
	}
	if err := tw.Flush(); err != nil {
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

func ms(d time.Duration) string {
	if d%time.Millisecond == 0 {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return d.String()
}
