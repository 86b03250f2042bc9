package render

import (
	"fmt"
	"io"
	"time"
)

// The HTML page's background work and violations: what the objects did
// outside the calls (alarm deliveries, runs of scheduled and queued
// tasks, their retries and effects) is on the time axis and on its
// object's row, so that the axis spans every turn a checker judged; and a
// checker's violations lead the page.

// mark is one piece of background work on the timeline.
type mark struct {
	at     time.Duration
	object string // NAMESPACE/OBJECT
	text   string
	effect bool
}

// background is the report's work outside its calls: its events, and the
// effects no call's turn recorded.
func (r *Report) background(rowOf map[string]int) []mark {
	var out []mark
	for _, e := range r.Events {
		out = append(out, mark{at: e.At, object: e.Namespace + "/" + e.Object, text: string(e.Kind) + " " + e.Text()})
	}
	for _, e := range r.Effects {
		if _, ok := rowOf[e.RequestID]; !ok {
			out = append(out, mark{at: e.At, object: e.Namespace + "/" + e.Object, text: e.Kind + " " + Value(e.Payload), effect: true})
		}
	}
	return out
}

// writeBackground draws object's background work on its group's row, at
// top: a ring for an event, a diamond for an effect, each with its text
// as a tooltip.
func writeBackground(w io.Writer, marks []mark, object string, top float64, px func(time.Duration) float64) {
	for _, m := range marks {
		if m.object != object {
			continue
		}
		x, y := px(m.at), top+svgGroupH/2
		shape := fmt.Sprintf(`<circle cx="%.1f" cy="%.1f" r="4" fill="#fff" stroke="%s" stroke-width="2"/>`, x, y, colSpan)
		if m.effect {
			shape = diamond(x, y, 5)
		}
		fmt.Fprintf(w, "<g class=\"background\">%s<title>%s at %s</title></g>\n", shape, esc(m.text), esc(Ms(m.at)))
	}
}

// writeViolationsHTML leads the page with the violations a checker found
// in the run, when there are any.
func writeViolationsHTML(w io.Writer, r Report) {
	if len(r.Violations) == 0 {
		return
	}
	fmt.Fprintf(w, "<div class=\"violations\"><p class=\"bad\"><b>%d violation(s)</b> in this run:</p>\n<ul class=\"failures\">\n", len(r.Violations))
	for _, v := range r.Violations {
		fmt.Fprintf(w, "<li><code>%s</code></li>\n", esc(v))
	}
	fmt.Fprintln(w, "</ul></div>")
}
