package explore

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/anishathalye/porcupine"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
)

// The linearizability page (History.Visualize) is porcupine's
// visualisation of a history, which draws each operation as a box as wide
// as its label, one row per operation, left to right in time. With whole
// calls as labels ("Hold("bob-1", 2, "bob") -> ok "seat 2 held by bob
// until 2025-01-01 00:15:00"") a booth's nine operations drew 4,577
// pixels wide: a 1280-pixel window showed two of them and seven rows that
// looked empty. So each box is labelled short (tagMax runes: its number
// and method, "#3 Hold"), the whole operation is the box's tooltip, and a
// table under the drawing lists every operation in full; every text that
// reaches the page's HTML is escaped (render.Escape, then HTML).

// tagMax bounds an operation's label on the page, in runes.
const tagMax = 18

// visualize writes the page of the history events, checked against pm;
// end is what the object was left with.
func visualize(w io.Writer, pm porcupine.Model, events []porcupine.Event, end string) error {
	describe, state := pm.DescribeOperation, pm.DescribeState
	full := func(input, output any) string {
		if op := input.(*hop); op.final {
			return "end state: the object was left with " + end
		}
		return describe(input, output)
	}
	pm.DescribeOperation = func(input, _ any) string { return input.(*hop).tag() }
	pm.DescribeState = func(st any) string { return pageText(state(st)) } // porcupine writes it as HTML
	pm.DescribeOperationMetadata = func(info any) string { s, _ := info.(string); return s }
	marked := make([]porcupine.Event, len(events))
	var ops []*hop
	for i, e := range events {
		e.Metadata = pageText(full(e.Value, nil)) // the tooltip, as HTML
		marked[i] = e
		if e.Kind == porcupine.CallEvent {
			ops = append(ops, e.Value.(*hop))
		}
	}
	_, info := porcupine.CheckEventsVerbose(pm, marked, 0)
	var page bytes.Buffer
	if err := porcupine.Visualize(pm, info, &page); err != nil {
		return err
	}
	const anchor = `<div id="canvas"></div>`
	before, after, ok := bytes.Cut(page.Bytes(), []byte(anchor))
	if !ok {
		return fmt.Errorf("explore: porcupine's page has no %s to put the operations under", anchor)
	}
	var table strings.Builder
	table.WriteString(anchor + "\n" + `<section id="operations" style="margin: 20px 10px; font-family: Menlo, Courier New, monospace; font-size: 0.85rem">` +
		`<table style="border-collapse: collapse"><tr><th style="text-align: left; padding-right: 1em">row</th><th style="text-align: left; padding-right: 1em">label</th><th style="text-align: left">operation</th></tr>` + "\n")
	for i, op := range ops {
		fmt.Fprintf(&table, `<tr><td style="padding-right: 1em">%d</td><td style="padding-right: 1em; white-space: nowrap">%s</td><td style="overflow-wrap: anywhere">%s</td></tr>`+"\n",
			i, pageText(op.tag()), pageText(full(op, nil)))
	}
	table.WriteString("</table></section>")
	_, err := fmt.Fprintf(w, "%s%s%s", before, table.String(), after)
	return err
}

// pageText is text for the page's HTML: control and bidirectional
// characters escaped as the text renderers escape them, then HTML.
func pageText(s string) string { return html.EscapeString(render.Escape(s)) }

// tag is the operation's short label on the linearizability page: the
// call's number and method ("#3 Hold", "#2 fetch"), the background turn's
// kind ("alarm", "ws1 message"), "end state"; with " ?" when its effect
// is unknown. At most tagMax runes.
func (op *hop) tag() string {
	t := op.turn
	var s string
	switch {
	case op.final:
		return "end state"
	case t == nil:
		s = "?"
	case t.WebSocket != nil:
		what := "message"
		if t.WebSocket.Close {
			what = "close"
		}
		s = fmt.Sprintf("ws%d %s", t.WebSocket.Socket.N, what)
	case t.Kind != runtime.TurnRequest:
		s = t.Kind.String()
	case op.call != nil:
		s = fmt.Sprintf("#%d %s", t.Call, op.call.Method)
	default:
		s = fmt.Sprintf("#%d", t.Call)
	}
	if op.maybe || !op.seen.known {
		s += " ?"
	}
	if utf8.RuneCountInString(s) > tagMax {
		s = string([]rune(s)[:tagMax-1]) + "…"
	}
	return s
}
