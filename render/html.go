package render

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// HTML writes one self-contained page for the reports: for each, an SVG
// timeline with a lane per object and a row per call, each attempt drawn
// over virtual time and coloured by what the object did, the link's faults
// marked with a cross, then tables of the calls and attempts, the effects,
// the storage at the end and the expectations. The page loads nothing from
// the network: no script, no external style sheet, no web font.
func HTML(w io.Writer, reports ...Report) error {
	bw := bufio.NewWriter(w)
	title := "dosim"
	if len(reports) == 1 {
		title = "dosim: " + reports[0].title()
	}
	fmt.Fprintf(bw, htmlHead, esc(title), htmlStyle)
	fmt.Fprintf(bw, "<header><h1>dosim</h1><p>Deterministic simulation of Durable-Object-style calls. Times are virtual, since the runtime started.</p></header>\n")
	for i, r := range reports {
		writeReportHTML(bw, r, i)
	}
	fmt.Fprintln(bw, "</body>\n</html>")
	return bw.Flush()
}

const htmlHead = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%s</title>
<style>%s</style>
</head>
<body>
`

const htmlStyle = `
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; margin: 24px 32px; color: #1f2937; background: #fff; }
header h1 { font-size: 20px; margin: 0 0 2px; color: #374151; }
header p { margin: 0 0 18px; color: #6b7280; font-size: 13px; }
section.report { margin-bottom: 48px; }
h2 { font-size: 22px; margin: 8px 0 4px; }
h2 .seed { font-size: 14px; font-weight: normal; color: #6b7280; margin-left: 8px; }
h3 { font-size: 15px; margin: 22px 0 8px; color: #374151; }
p.file { margin: 0 0 6px; color: #6b7280; font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; }
p.desc { margin: 6px 0 10px; max-width: 980px; white-space: pre-line; line-height: 1.45; }
.summary { margin: 8px 0 12px; font-size: 14px; }
.summary b.ok { color: #15803d; } .summary b.fail { color: #b91c1c; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 18px; font-size: 12.5px; color: #374151; margin: 6px 0 10px; align-items: center; }
.legend span { display: inline-flex; align-items: center; gap: 6px; }
.timeline { overflow-x: auto; border: 1px solid #e5e7eb; border-radius: 6px; padding: 6px 0; background: #fff; }
.timeline svg { display: block; font-family: system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; }
table { border-collapse: collapse; font-size: 12.5px; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: 3px 10px; border-bottom: 1px solid #eef0f3; vertical-align: top; }
th { background: #f9fafb; color: #374151; font-weight: 600; }
td.num { text-align: right; }
tr.call td { border-top: 1px solid #d1d5db; }
td.err, td.result { color: #6b7280; font-size: 12px; padding-left: 28px; }
code, td.mono { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; }
.good { color: #15803d; font-weight: 600; } .warn { color: #b45309; font-weight: 600; } .bad { color: #b91c1c; font-weight: 600; }
.fault { color: #b91c1c; } .dim { color: #6b7280; } .rej { color: #b45309; }
ul.failures { margin: 4px 0; padding-left: 20px; } ul.failures li { margin: 4px 0; }
`

// esc is text for an HTML page: HTML-escaped, and inert (no character that
// can reorder or hide the text around it reaches the page as itself).
func esc(s string) string { return html.EscapeString(inert(s)) }

// Colours of the timeline.
const (
	colExecuted = "#16a34a"
	colRejected = "#f59e0b"
	colReceived = "#94a3b8"
	colFault    = "#dc2626"
	colEffect   = "#7c3aed"
	colSpan     = "#9ca3af"
	colGrid     = "#eef0f3"
)

func writeReportHTML(w io.Writer, r Report, idx int) {
	fmt.Fprintf(w, "<section class=\"report\" id=\"report-%d\">\n", idx+1)
	name := r.Name
	if name == "" {
		name = "run"
	}
	fmt.Fprintf(w, "<h2>%s<span class=\"seed\">seed %d</span></h2>\n", esc(name), r.Seed)
	if r.File != "" {
		fmt.Fprintf(w, "<p class=\"file\">%s</p>\n", esc(r.File))
	}
	if d := strings.TrimSpace(r.Description); d != "" {
		fmt.Fprintf(w, "<p class=\"desc\">%s</p>\n", esc(d))
	}
	writeViolationsHTML(w, r)
	attempts, executions := 0, 0
	for _, c := range r.Calls {
		attempts += len(c.Attempts)
		executions += c.Executions()
	}
	fmt.Fprintf(w, "<div class=\"summary\">%d calls, %d attempts, %d executions, %d effects", len(r.Calls), attempts, executions, len(r.Effects))
	if n := len(r.Violations); n > 0 {
		fmt.Fprintf(w, " &middot; <b class=\"fail\">violations: %d</b>", n)
	}
	switch {
	case r.Expectations == 0:
	case len(r.Failures) == 0:
		fmt.Fprintf(w, " &middot; <b class=\"ok\">expectations: all %d met</b>", r.Expectations)
	default:
		fmt.Fprintf(w, " &middot; <b class=\"fail\">expectations: %d of %d NOT met</b>", len(r.Failures), r.Expectations)
	}
	fmt.Fprintln(w, "</div>")
	if len(r.Calls) > 0 {
		writeLegend(w)
		fmt.Fprintln(w, "<div class=\"timeline\">")
		writeSVG(w, r)
		fmt.Fprintln(w, "</div>")
		writeCallTable(w, r)
	}
	writeEffectTable(w, r)
	writeEventTable(w, r)
	writeStorageTable(w, r)
	writeExpectationsHTML(w, r)
	fmt.Fprintln(w, "</section>")
}

func writeLegend(w io.Writer) {
	sw := func(body string) string {
		return `<svg width="26" height="16" viewBox="0 0 26 16" aria-hidden="true">` + body + `</svg>`
	}
	items := []struct{ icon, text string }{
		{sw(`<rect x="3" y="3" width="20" height="10" rx="2" fill="` + colExecuted + `"/>`), "an attempt the object executed (its number inside)"},
		{sw(`<rect x="3" y="3" width="20" height="10" rx="2" fill="` + colRejected + `"/>`), "rejected as a duplicate (not run)"},
		{sw(`<rect x="3" y="3" width="20" height="10" rx="2" fill="#fff" stroke="` + colReceived + `" stroke-dasharray="3 2"/>`), "never reached the object"},
		{sw(cross(13, 8, 5)), "the link failed there (the fault is named above)"},
		{sw(`<rect x="1" y="5" width="16" height="6" rx="2" fill="` + colExecuted + `" fill-opacity="0.45"/><rect x="15" y="1" width="10" height="14" rx="2" fill="` + colExecuted + `"/>`), "an attempt that took time (link latency), drawn up to its end"},
		{sw(`<rect x="1" y="5" width="20" height="6" rx="2" fill="#fff" stroke="` + colFault + `" stroke-width="1.5" stroke-dasharray="4 2"/><line x1="23" y1="1" x2="23" y2="15" stroke="` + colFault + `" stroke-width="2"/>`), "cancelled: the caller stopped waiting"},
		{sw(`<line x1="1" y1="8" x2="25" y2="8" stroke="` + colSpan + `" stroke-width="2"/>`), "the call, start to end (gaps: backoff)"},
		{sw(diamond(13, 8, 5)), "an effect (an email sent...)"},
		{sw(`<circle cx="13" cy="8" r="4" fill="#fff" stroke="` + colSpan + `" stroke-width="2"/>`), "background work on the object's row: an alarm, a scheduled or queued task (hover for what)"},
	}
	fmt.Fprint(w, "<div class=\"legend\">")
	for _, it := range items {
		fmt.Fprintf(w, "<span>%s%s</span>", it.icon, esc(it.text))
	}
	fmt.Fprintln(w, "</div>")
}

func cross(x, y, s float64) string {
	return fmt.Sprintf(`<path d="M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f" stroke="%s" stroke-width="2.5" stroke-linecap="round"/>`,
		x-s, y-s, x+s, y+s, x-s, y+s, x+s, y-s, colFault)
}

func diamond(x, y, s float64) string {
	return fmt.Sprintf(`<path d="M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ" fill="%s"/>`, x, y-s, x+s, y, x, y+s, x-s, y, colEffect)
}

// timeScale maps the distinct virtual times of a run to x positions: each
// step between two times gets a minimum width, so that events close in time
// stay apart, and the rest of the width is shared in proportion to time.
type timeScale struct {
	times []time.Duration
	xs    []float64
	width float64
}

func newTimeScale(times []time.Duration, width float64) timeScale {
	slices.Sort(times)
	times = slices.Compact(times)
	s := timeScale{times: times, xs: make([]float64, len(times)), width: width}
	n := len(times)
	if n <= 1 {
		if n == 1 {
			s.xs[0] = 24
		}
		return s
	}
	// Each step is at least wide enough for an attempt's box and cross.
	gap := 44.0
	if gap*float64(n-1) > width*0.6 {
		gap = max(30, width*0.6/float64(n-1))
	}
	rest := width - gap*float64(n-1)
	span := float64(times[n-1] - times[0])
	k := 0.0
	if rest > 0 && span > 0 {
		k = rest / span
	}
	for i := 1; i < n; i++ {
		s.xs[i] = s.xs[i-1] + gap + k*float64(times[i]-times[i-1])
	}
	s.width = max(width, s.xs[n-1])
	return s
}

func (s timeScale) x(t time.Duration) float64 {
	i, ok := slices.BinarySearch(s.times, t)
	if ok {
		return s.xs[i]
	}
	if i == 0 {
		return 0
	}
	if i >= len(s.times) {
		return s.xs[len(s.xs)-1]
	}
	t0, t1 := s.times[i-1], s.times[i]
	return s.xs[i-1] + (s.xs[i]-s.xs[i-1])*float64(t-t0)/float64(t1-t0)
}

// Layout of the SVG.
const (
	svgLabelW  = 270.0 // the call labels on the left
	svgPlotW   = 800.0 // the time axis, at least
	svgRightW  = 180.0 // the outcome text on the right
	svgAxisH   = 40.0
	svgGroupH  = 26.0
	svgRowH    = 50.0
	svgPlotPad = 24.0
	// labelChars is how many characters of a call's label fit on the left.
	labelChars = 30
)

// truncate shortens s to n runes with an ellipsis.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// textWidth estimates the width of text at the given font size.
func textWidth(s string, size float64) float64 { return float64(len([]rune(s))) * size * 0.62 }

func writeSVG(w io.Writer, r Report) {
	// Objects in order of their first call, and the calls of each.
	var objects []string
	callsOf := map[string][]int{}
	var times []time.Duration
	for i, c := range r.Calls {
		o := c.Namespace + "/" + c.Object
		if _, ok := callsOf[o]; !ok {
			objects = append(objects, o)
		}
		callsOf[o] = append(callsOf[o], i)
		times = append(times, c.Start, c.End)
		for _, a := range c.Attempts {
			times = append(times, a.Start, a.End)
		}
	}
	rowOf := r.callOfRequest()
	effectsOf := map[int][]runtime.Effect{}
	for _, e := range r.Effects {
		if i, ok := rowOf[e.RequestID]; ok {
			effectsOf[i] = append(effectsOf[i], e)
			times = append(times, e.At)
		}
	}
	// Background work (alarms, schedules, queues, and the effects of
	// turns no call made) is on the axis too, and on its object's row.
	bg := r.background(rowOf)
	for _, b := range bg {
		times = append(times, b.at)
		if _, ok := callsOf[b.object]; !ok {
			objects = append(objects, b.object)
			callsOf[b.object] = nil
		}
	}
	sc := newTimeScale(times, svgPlotW)
	x0 := svgLabelW + svgPlotPad
	px := func(t time.Duration) float64 { return x0 + sc.x(t) }
	width := x0 + sc.width + svgRightW
	height := svgAxisH + float64(len(objects))*svgGroupH + float64(len(r.Calls))*svgRowH + 10

	fmt.Fprintf(w, `<svg width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`+"\n",
		width, height, width, height, esc("timeline of "+r.title()))
	fmt.Fprintf(w, `<text x="12" y="24" font-size="12" fill="#6b7280">virtual time &#8594;</text>`+"\n")
	// The axis: a tick and a grid line at each distinct time, labelled when there is room.
	fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#9ca3af"/>`+"\n", x0, svgAxisH-8, x0+sc.width, svgAxisH-8)
	lastEnd := -1e9
	for _, t := range sc.times {
		x := px(t)
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>`+"\n", x, svgAxisH-8, x, height-6, colGrid)
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#9ca3af"/>`+"\n", x, svgAxisH-12, x, svgAxisH-4)
		label := Ms(t)
		lw := textWidth(label, 11)
		if x-lw/2 >= lastEnd+8 {
			fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="11" fill="#4b5563" text-anchor="middle">%s</text>`+"\n", x, svgAxisH-16, esc(label))
			lastEnd = x + lw/2
		}
	}
	y := svgAxisH
	for _, o := range objects {
		fmt.Fprintf(w, `<rect x="0" y="%.1f" width="%.1f" height="%.1f" fill="#f3f4f6"/>`+"\n", y, width, svgGroupH)
		fmt.Fprintf(w, `<text x="12" y="%.1f" font-size="13" font-weight="600" fill="#111827">%s</text>`+"\n", y+17, esc(o))
		writeBackground(w, bg, o, y, px)
		y += svgGroupH
		for _, i := range callsOf[o] {
			writeCallRow(w, r, i, y, px, effectsOf[i])
			y += svgRowH
		}
	}
	fmt.Fprintln(w, "</svg>")
}

// writeCallRow draws call i of r as a row of the SVG timeline, its top at
// top: the call's span, each attempt, the backoff waits, faults,
// effects and the outcome.
func writeCallRow(w io.Writer, r Report, i int, top float64, px func(time.Duration) float64, effects []runtime.Effect) {
	c := r.Calls[i]
	mid := top + 26
	full := fmt.Sprintf("#%d %s", i+1, r.label(i))
	fmt.Fprintf(w, `<g><title>%s</title><text x="22" y="%.1f" font-size="12.5" fill="#1f2937">%s</text></g>`+"\n",
		esc(full+": "+c.Outcome.String()), mid+4, esc(truncate(full, labelChars)))
	fmt.Fprintf(w, `<line x1="0" y1="%.1f" x2="100%%" y2="%.1f" stroke="%s"/>`+"\n", top+svgRowH, top+svgRowH, colGrid)
	// The call: a line from its start to its end, with a cap at each end.
	xs, xe := px(c.Start), px(c.End)
	fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`+"\n", xs, mid, xe, mid, colSpan)
	for _, x := range []float64{xs, xe} {
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`+"\n", x, mid-6, x, mid+6, colSpan)
	}
	labelEnd := -1e9
	label := func(x float64, text, color string) {
		lw := textWidth(text, 10.5)
		if x-lw/2 < labelEnd+6 {
			return // no room: the tooltip and the table below say it
		}
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="10.5" fill="%s" text-anchor="middle">%s</text>`+"\n", x, mid-12, color, esc(text))
		labelEnd = x + lw/2
	}
	rightmost := xe + 6
	lastFault := transport.None
	for j, a := range c.Attempts {
		// Backoff: the caller's wait before this attempt, when there is room to say it.
		if j > 0 {
			prev := c.Attempts[j-1]
			g0, g1 := px(prev.End)+20, px(a.Start)-8
			if wait := a.Start - prev.End; wait > 0 && g1-g0 >= textWidth("wait "+Ms(wait), 10)+4 {
				fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="10" fill="#6b7280" text-anchor="middle">wait %s</text>`+"\n", (g0+g1)/2, mid+17, Ms(wait))
			}
		}
		tip, x2 := writeAttemptBox(w, a, mid, px)
		if a.Fault != transport.None {
			// A cross where the link failed: after the box, the request or
			// the reply went no further.
			fmt.Fprintf(w, `<g><title>%s</title>%s</g>`+"\n", esc(tip), cross(x2+13, mid, 4))
			rightmost = max(rightmost, x2+18)
			if a.Fault != lastFault {
				label(x2, a.Fault.String(), colFault)
				lastFault = a.Fault
			}
		}
		rightmost = max(rightmost, x2+6)
	}
	if n := len(c.Attempts); n > 0 && c.Attempts[n-1].Cancelled {
		// The caller stopped waiting here (the deadline, or its context).
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`+"\n", xe, mid-9, xe, mid+9, colFault)
		label(xe, "cancelled", colFault)
	}
	for _, e := range effects {
		fmt.Fprintf(w, `<g><title>%s</title>%s</g>`+"\n", esc(fmt.Sprintf("effect at %s: %s %s (attempt %d)", Ms(e.At), e.Kind, Value(e.Payload), e.Attempt)),
			diamond(px(e.At), mid+14, 4.5))
	}
	cls := outcomeClass(c.Outcome)
	color := map[string]string{"good": "#15803d", "warn": "#b45309", "bad": "#b91c1c", "none": "#6b7280"}[cls]
	fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="12.5" font-weight="600" fill="%s">%s</text>`+"\n", rightmost+8, mid+4, color, esc(c.Outcome.String()))
}

// writeAttemptBox draws attempt a of a call row whose middle is at mid:
// a thin bar while it takes time and the numbered box that says how it
// ended. It returns the attempt's tooltip and where its box is.
func writeAttemptBox(w io.Writer, a runtime.AttemptRecord, mid float64, px func(time.Duration) float64) (tip string, x2 float64) {
	tip = fmt.Sprintf("attempt %d: %s to %s; link: %s; object: %s", a.N, Ms(a.Start), Ms(a.End), a.LinkText(), a.DidText())
	if a.Err != "" {
		tip += "; " + a.Err
	}
	fill, stroke, dash := "#fff", colReceived, ` stroke-dasharray="3 2"`
	switch {
	case a.Rejected:
		fill, stroke, dash = colRejected, colRejected, ""
	case a.Executed:
		fill, stroke, dash = colExecuted, colExecuted, ""
	case a.Delivered:
		fill, stroke, dash = colReceived, colReceived, ""
	}
	x1 := px(a.Start)
	x2 = px(a.End)
	fmt.Fprintf(w, "<g><title>%s</title>", esc(tip))
	// An attempt that takes time (link latency, a long method) is a thin
	// bar up to the box that says how it ended.
	if x2-x1 > 8 {
		barStroke := ""
		if a.Cancelled {
			barStroke = fmt.Sprintf(` stroke="%s" stroke-width="1.5" stroke-dasharray="4 2"`, colFault)
		}
		fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="%.1f" height="6" rx="2" fill="%s" fill-opacity="0.45"%s/>`,
			x1, mid-3, x2-x1-6, fill, barStroke)
		if fill == "#fff" {
			fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="%.1f" height="6" rx="2" fill="none" stroke="%s" stroke-dasharray="3 2"/>`, x1, mid-3, x2-x1-6, colReceived)
		}
	}
	fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="12" height="14" rx="3" fill="%s" stroke="%s" stroke-width="1.2"%s/>`, x2-6, mid-7, fill, stroke, dash)
	numFill := "#fff"
	if fill == "#fff" {
		numFill = "#4b5563"
	}
	fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="10" font-weight="600" fill="%s" text-anchor="middle">%d</text></g>`+"\n", x2, mid+3.5, numFill, a.N)
	return tip, x2
}

func writeCallTable(w io.Writer, r Report) {
	effects := effectsByAttempt(r.Effects)
	fmt.Fprintln(w, "<h3>Calls and attempts</h3>")
	fmt.Fprintln(w, "<table><thead><tr><th>#</th><th>start</th><th>end</th><th>object</th><th>call</th><th>try</th><th>link</th><th>object did</th><th>outcome</th></tr></thead><tbody>")
	for i, c := range r.Calls {
		for j, a := range c.Attempts {
			cls := ""
			if j == 0 {
				cls = ` class="call"`
			}
			fmt.Fprintf(w, "<tr%s>", cls)
			if j == 0 {
				fmt.Fprintf(w, "<td class=\"num\">%d</td>", i+1)
			} else {
				fmt.Fprint(w, "<td></td>")
			}
			fmt.Fprintf(w, "<td class=\"num\">%s</td><td class=\"num\">%s</td>", Ms(a.Start), Ms(a.End))
			if j == 0 {
				fmt.Fprintf(w, "<td>%s</td><td class=\"mono\">%s</td>", esc(c.Namespace+"/"+c.Object), esc(r.label(i)))
			} else {
				fmt.Fprint(w, "<td></td><td></td>")
			}
			linkCls := "dim"
			if a.Fault != transport.None || a.Cancelled {
				linkCls = "fault"
			}
			did := a.DidText()
			if k := kindsText(effects[effectKey{c.RequestID, a.N}]); k != "" {
				did += " (" + k + ")"
			}
			didCls := ""
			switch {
			case a.Rejected:
				didCls = "rej"
			case !a.Executed:
				didCls = "dim"
			}
			outcome := ""
			if j == len(c.Attempts)-1 {
				outcome = fmt.Sprintf("<span class=\"%s\">%s</span>", outcomeClass(c.Outcome), esc(c.Outcome.String()))
			}
			fmt.Fprintf(w, "<td class=\"num\">%d</td><td class=\"%s\">%s</td><td class=\"%s\">%s</td><td>%s</td></tr>\n",
				a.N, linkCls, esc(a.LinkText()), didCls, esc(did), outcome)
		}
		if c.OneShot != "" {
			fmt.Fprintf(w, "<tr><td></td><td colspan=\"8\" class=\"result\">one-shot: %s</td></tr>\n", esc(c.OneShot))
		}
		if c.Err == "" && c.Result != nil {
			fmt.Fprintf(w, "<tr><td></td><td colspan=\"8\" class=\"result\">result: %s</td></tr>\n", esc(Value(c.Result)))
		}
		if c.Err != "" {
			fmt.Fprintf(w, "<tr><td></td><td colspan=\"8\" class=\"err\">error: %s</td></tr>\n", esc(c.Err))
		}
	}
	fmt.Fprintln(w, "</tbody></table>")
}

// writeEventTable lists the objects' events: alarms, tasks, retries, resets, WebSockets.
func writeEventTable(w io.Writer, r Report) {
	if len(r.Events) == 0 {
		return
	}
	fmt.Fprintln(w, "<h3>Events: alarms, tasks, retries, resets, WebSockets</h3>")
	fmt.Fprintln(w, "<table><thead><tr><th>at</th><th>object</th><th>event</th><th>detail</th></tr></thead><tbody>")
	for _, e := range r.Events {
		fmt.Fprintf(w, "<tr><td class=\"num\">%s</td><td>%s</td><td>%s</td><td class=\"mono\">%s</td></tr>\n",
			Ms(e.At), esc(e.Namespace+"/"+e.Object), esc(string(e.Kind)), esc(e.Text()))
	}
	fmt.Fprintln(w, "</tbody></table>")
}

func writeEffectTable(w io.Writer, r Report) {
	if len(r.Effects) == 0 {
		return
	}
	calls := r.callOfRequest()
	fmt.Fprintln(w, "<h3>Effects</h3>")
	fmt.Fprintln(w, "<table><thead><tr><th>at</th><th>object</th><th>kind</th><th>payload</th><th>by</th></tr></thead><tbody>")
	for _, e := range r.Effects {
		by := "outside a call"
		if i, ok := calls[e.RequestID]; ok {
			by = fmt.Sprintf("call %d, attempt %d", i+1, e.Attempt)
		}
		fmt.Fprintf(w, "<tr><td class=\"num\">%s</td><td>%s</td><td>%s</td><td class=\"mono\">%s</td><td class=\"dim\">%s</td></tr>\n",
			Ms(e.At), esc(e.Namespace+"/"+e.Object), esc(e.Kind), esc(Value(e.Payload)), esc(by))
	}
	fmt.Fprintln(w, "</tbody></table>")
}

func writeStorageTable(w io.Writer, r Report) {
	if len(r.Storage) == 0 {
		return
	}
	fmt.Fprintln(w, "<h3>Storage at the end</h3>")
	fmt.Fprintln(w, "<table><thead><tr><th>object</th><th>key</th><th>value</th></tr></thead><tbody>")
	for _, o := range r.Storage {
		name := o.Namespace + "/" + o.Object
		if len(o.Data) == 0 {
			fmt.Fprintf(w, "<tr><td>%s</td><td class=\"dim\" colspan=\"2\">(empty)</td></tr>\n", esc(name))
			continue
		}
		for _, k := range sortedKeys(o.Data) {
			fmt.Fprintf(w, "<tr><td>%s</td><td class=\"mono\">%s</td><td class=\"mono\">%s</td></tr>\n", esc(name), esc(k), esc(Value(o.Data[k])))
			name = ""
		}
	}
	fmt.Fprintln(w, "</tbody></table>")
}

func writeExpectationsHTML(w io.Writer, r Report) {
	if r.Expectations == 0 {
		return
	}
	fmt.Fprintln(w, "<h3>Expectations</h3>")
	if len(r.Failures) == 0 {
		fmt.Fprintf(w, "<p class=\"good\">All %d met.</p>\n", r.Expectations)
		return
	}
	fmt.Fprintf(w, "<p class=\"bad\">%d of %d NOT met:</p>\n<ul class=\"failures\">\n", len(r.Failures), r.Expectations)
	for _, f := range r.Failures {
		fmt.Fprintf(w, "<li><code>%s</code><br>expected <span class=\"good\">%s</span>, got <span class=\"bad\">%s</span></li>\n",
			esc(f.Where), esc(f.Want), esc(f.Got))
	}
	fmt.Fprintln(w, "</ul>")
}
