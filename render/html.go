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
	fmt.Fprintf(bw, "<header><h1>dosim</h1><p>Deterministic simulation of Durable-Object-style calls. Times are virtual: milliseconds since the runtime started.</p></header>\n")
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
td.err { color: #6b7280; font-size: 12px; padding-left: 28px; }
code, td.mono { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; }
.good { color: #15803d; font-weight: 600; } .warn { color: #b45309; font-weight: 600; } .bad { color: #b91c1c; font-weight: 600; }
.fault { color: #b91c1c; } .dim { color: #6b7280; } .rej { color: #b45309; }
ul.failures { margin: 4px 0; padding-left: 20px; } ul.failures li { margin: 4px 0; }
`

func esc(s string) string { return html.EscapeString(s) }

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
	attempts, executions := 0, 0
	for _, c := range r.Calls {
		attempts += len(c.Attempts)
		executions += c.Executions()
	}
	fmt.Fprintf(w, "<div class=\"summary\">%d calls, %d attempts, %d executions, %d effects", len(r.Calls), attempts, executions, len(r.Effects))
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
	writeStorageTable(w, r)
	writeExpectationsHTML(w, r)
	fmt.Fprintln(w, "</section>")
}

func writeLegend(w io.Writer) {
	sw := func(body string) string {
		return `<svg width="26" height="16" viewBox="0 0 26 16" aria-hidden="true">` + body + `</svg>`
	}
	items := []struct{ icon, text string }{
		{sw(`<rect x="3" y="3" width="20" height="10" rx="2" fill="` + colExecuted + `"/>`), "attempt: the object executed it"},
		{sw(`<rect x="3" y="3" width="20" height="10" rx="2" fill="` + colRejected + `"/>`), "rejected as a duplicate (not run)"},
		{sw(`<rect x="3" y="3" width="20" height="10" rx="2" fill="#fff" stroke="` + colReceived + `" stroke-dasharray="3 2"/>`), "never reached the object"},
		{sw(cross(13, 8, 5)), "the link failed (fault named above)"},
		{sw(`<rect x="3" y="3" width="20" height="10" rx="2" fill="#fff" stroke="` + colFault + `" stroke-width="2" stroke-dasharray="4 2"/>`), "cancelled: the caller stopped waiting"},
		{sw(`<line x1="1" y1="8" x2="25" y2="8" stroke="` + colSpan + `" stroke-width="2"/>`), "the call, start to end (gaps: backoff)"},
		{sw(diamond(13, 8, 5)), "an effect (an email sent...)"},
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
	gap := 40.0
	if gap*float64(n-1) > width*0.6 {
		gap = max(18, width*0.6/float64(n-1))
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
	svgLabelW  = 290.0 // the call labels on the left
	svgPlotW   = 760.0 // the time axis, at least
	svgRightW  = 200.0 // the outcome text on the right
	svgAxisH   = 40.0
	svgGroupH  = 26.0
	svgRowH    = 46.0
	svgPlotPad = 24.0
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
func textWidth(s string, size float64) float64 { return float64(len([]rune(s))) * size * 0.58 }

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
	sc := newTimeScale(times, svgPlotW)
	x0 := svgLabelW + svgPlotPad
	px := func(t time.Duration) float64 { return x0 + sc.x(t) }
	width := x0 + sc.width + svgRightW
	height := svgAxisH + float64(len(objects))*svgGroupH + float64(len(r.Calls))*svgRowH + 10

	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`+"\n",
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
		if x-lw/2 >= lastEnd+6 {
			fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="11" fill="#4b5563" text-anchor="middle">%s</text>`+"\n", x, svgAxisH-16, esc(label))
			lastEnd = x + lw/2
		}
	}
	y := svgAxisH
	for _, o := range objects {
		fmt.Fprintf(w, `<rect x="0" y="%.1f" width="%.1f" height="%.1f" fill="#f3f4f6"/>`+"\n", y, width, svgGroupH)
		fmt.Fprintf(w, `<text x="12" y="%.1f" font-size="13" font-weight="600" fill="#111827">%s</text>`+"\n", y+17, esc(o))
		y += svgGroupH
		for _, i := range callsOf[o] {
			writeCallRow(w, r, i, y, px, effectsOf[i])
			y += svgRowH
		}
	}
	fmt.Fprintln(w, "</svg>")
}

func writeCallRow(w io.Writer, r Report, i int, top float64, px func(time.Duration) float64, effects []runtime.Effect) {
	c := r.Calls[i]
	mid := top + 24
	full := fmt.Sprintf("#%d %s", i+1, r.label(i))
	fmt.Fprintf(w, `<g><title>%s</title><text x="22" y="%.1f" font-size="12.5" fill="#1f2937">%s</text></g>`+"\n",
		esc(full+": "+c.Outcome), mid+4, esc(truncate(full, 40)))
	fmt.Fprintf(w, `<line x1="0" y1="%.1f" x2="100%%" y2="%.1f" stroke="%s"/>`+"\n", top+svgRowH, top+svgRowH, colGrid)
	end := c.End
	for _, a := range c.Attempts {
		end = max(end, a.End)
	}
	xs, xe := px(c.Start), px(end)
	fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`+"\n", xs, mid, xe, mid, colSpan)
	for _, x := range []float64{xs, xe} {
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`+"\n", x, mid-6, x, mid+6, colSpan)
	}
	labelEnd := -1e9
	rightmost := xe
	for _, a := range c.Attempts {
		x1, x2 := px(a.Start), px(a.End)
		if x2-x1 < 12 {
			if a.End == a.Start {
				x1 -= 6
			}
			x2 = x1 + 12
		}
		fill, stroke, dash, sw := "#fff", colReceived, ` stroke-dasharray="3 2"`, 1.2
		switch {
		case a.Rejected:
			fill, stroke, dash = colRejected, colRejected, ""
		case a.Executed:
			fill, stroke, dash = colExecuted, colExecuted, ""
		case a.Delivered:
			fill, stroke, dash = colReceived, colReceived, ""
		}
		if a.Cancelled {
			stroke, dash, sw = colFault, ` stroke-dasharray="4 2"`, 2
		}
		tip := fmt.Sprintf("attempt %d: %s to %s; link: %s; object: %s", a.N, Ms(a.Start), Ms(a.End), LinkText(a), DidText(a))
		if a.Err != "" {
			tip += "; " + a.Err
		}
		fmt.Fprintf(w, `<g><title>%s</title><rect x="%.1f" y="%.1f" width="%.1f" height="14" rx="3" fill="%s" stroke="%s" stroke-width="%.1f"%s/>`,
			esc(tip), x1, mid-7, x2-x1, fill, stroke, sw, dash)
		numFill := "#fff"
		if !a.Executed && !a.Rejected && !a.Delivered {
			numFill = "#4b5563"
		}
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="10" font-weight="600" fill="%s" text-anchor="middle">%d</text></g>`+"\n",
			(x1+x2)/2, mid+3.5, numFill, a.N)
		// The fault: a cross where the link failed, and its name above.
		mark := 0.0
		switch a.Fault {
		case transport.NotDelivered, transport.LoseRequest, transport.Overloaded:
			mark = x2 + 8 // the request went no further
		case transport.LoseWhileRunning, transport.LoseResponse, transport.FailAfterDelivery:
			mark = x2 + 8 // the reply never came back
		}
		note := ""
		if a.Fault != transport.None {
			note = a.Fault.String()
			fmt.Fprintf(w, `<g><title>%s</title>%s</g>`+"\n", esc(tip), cross(mark, mid, 4.5))
			rightmost = max(rightmost, mark+6)
		}
		if a.Cancelled {
			if note != "" {
				note += ", "
			}
			note += "cancelled"
		}
		if note != "" {
			lx := (x1 + x2) / 2
			lw := textWidth(note, 10.5)
			if lx-lw/2 < labelEnd+4 {
				note = truncate(note, 1+int(max(0, (lx-labelEnd-4)*2/(10.5*0.58))))
				lw = textWidth(note, 10.5)
			}
			if len(note) > 1 {
				fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="10.5" fill="%s" text-anchor="middle">%s</text>`+"\n", lx, mid-11, colFault, esc(note))
				labelEnd = lx + lw/2
			}
		}
	}
	for _, e := range effects {
		fmt.Fprintf(w, `<g><title>%s</title>%s</g>`+"\n", esc(fmt.Sprintf("effect at %s: %s %s (attempt %d)", Ms(e.At), e.Kind, Value(e.Payload), e.Attempt)),
			diamond(px(e.At), mid+15, 4.5))
	}
	cls := outcomeClass(c.Outcome)
	color := map[string]string{"good": "#15803d", "warn": "#b45309", "bad": "#b91c1c", "none": "#6b7280"}[cls]
	fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="12.5" font-weight="600" fill="%s">%s</text>`+"\n", rightmost+10, mid+4, color, esc(c.Outcome))
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
			did := DidText(a)
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
				outcome = fmt.Sprintf("<span class=\"%s\">%s</span>", outcomeClass(c.Outcome), esc(c.Outcome))
			}
			fmt.Fprintf(w, "<td class=\"num\">%d</td><td class=\"%s\">%s</td><td class=\"%s\">%s</td><td>%s</td></tr>\n",
				a.N, linkCls, esc(LinkText(a)), didCls, esc(did), outcome)
		}
		if c.Err != "" {
			fmt.Fprintf(w, "<tr><td></td><td colspan=\"8\" class=\"err\">error: %s</td></tr>\n", esc(c.Err))
		}
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
