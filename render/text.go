package render

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/dosim/dosim/internal/layout"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// TextOptions configures Text.
type TextOptions struct {
	// Color adds ANSI colours: set it only when writing to a terminal, and
	// not when NO_COLOR is set.
	Color bool
}

// ANSI colours.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiBlue   = "\x1b[34m"
)

// cell is one table cell: its text and its colour (ANSI, or "").
type cell struct {
	text  string
	color string
}

// row is a table row, or a note: a line of its own under the row before,
// indented, that does not count in the column widths.
type row struct {
	cells []cell
	note  *cell
}

// Text writes the report as a timeline a person reads in a terminal: one
// row per attempt with its virtual start and end, what the link did, what
// the object did and, on a call's last attempt, the call's outcome; the
// caller's error under the call; then the effects, the storage at the end
// and the expectations.
func Text(w io.Writer, r Report, opts TextOptions) error {
	bw := bufio.NewWriter(w)
	paint := func(c cell) string {
		if !opts.Color || c.color == "" || c.text == "" {
			return c.text
		}
		return c.color + c.text + ansiReset
	}
	fmt.Fprintln(bw, paint(cell{Escape(r.title()), ansiBold}))
	if r.File != "" {
		fmt.Fprintln(bw, paint(cell{Escape(r.File), ansiDim}))
	}
	if d := strings.TrimSpace(r.Description); d != "" {
		for _, line := range strings.Split(d, "\n") {
			fmt.Fprintln(bw, Escape(strings.TrimRight(line, " \t")))
		}
	}
	fmt.Fprintln(bw)

	if len(r.Calls) == 0 {
		fmt.Fprintln(bw, "no calls")
	} else {
		writeTable(bw, timelineRows(r), paint)
	}
	writeEffects(bw, r, paint)
	writeEvents(bw, r, paint)
	writeStorage(bw, r)
	writeExpectations(bw, r, paint)
	return bw.Flush()
}

// timelineRows lays out the calls: a header, then a row per attempt.
func timelineRows(r Report) []row {
	rows := []row{{cells: []cell{{"#", ""}, {"START", ""}, {"END", ""}, {"OBJECT", ""}, {"CALL", ""},
		{"TRY", ""}, {"LINK", ""}, {"OBJECT DID", ""}, {"OUTCOME", ""}}}}
	for i := range rows[0].cells {
		rows[0].cells[i].color = ansiBold
	}
	effects := effectsByAttempt(r.Effects)
	for i, c := range r.Calls {
		if len(c.Attempts) == 0 {
			rows = append(rows, row{cells: []cell{{fmt.Sprint(i + 1), ""}, {Ms(c.Start), ""}, {Ms(c.End), ""},
				{c.Namespace + "/" + c.Object, ""}, {r.label(i), ""}, {"-", ""}, {"", ""}, {"", ""}, outcomeCell(c.Outcome)}})
		}
		for j, a := range c.Attempts {
			cells := make([]cell, 9)
			if j == 0 {
				cells[0] = cell{fmt.Sprint(i + 1), ""}
				cells[3] = cell{c.Namespace + "/" + c.Object, ""}
				cells[4] = cell{r.label(i), ansiBlue}
			}
			cells[1] = cell{Ms(a.Start), ""}
			cells[2] = cell{Ms(a.End), ""}
			cells[5] = cell{fmt.Sprint(a.N), ""}
			cells[6] = linkCell(a)
			cells[7] = didCell(a, effects[effectKey{c.RequestID, a.N}])
			if j == len(c.Attempts)-1 {
				cells[8] = outcomeCell(c.Outcome)
			}
			rows = append(rows, row{cells: cells})
		}
		if c.OneShot != "" {
			rows = append(rows, row{note: &cell{"one-shot: " + Escape(c.OneShot), ansiDim}})
		}
		if c.Err == "" && c.Result != nil {
			rows = append(rows, row{note: &cell{"result: " + Value(c.Result), ansiDim}})
		}
		if c.Err != "" {
			rows = append(rows, row{note: &cell{"error: " + c.Err, ansiDim}})
		}
	}
	return rows
}

func linkCell(a runtime.AttemptRecord) cell {
	color := ""
	switch {
	case a.Fault == transport.None:
		color = ansiDim
	case a.Fault.Retryable():
		color = ansiYellow
	default:
		color = ansiRed
	}
	if a.Cancelled {
		color = ansiRed
	}
	return cell{a.LinkText(), color}
}

func didCell(a runtime.AttemptRecord, kinds []string) cell {
	text := a.DidText()
	if k := kindsText(kinds); k != "" {
		text += " (" + k + ")"
	}
	color := ""
	switch {
	case a.Rejected:
		color = ansiYellow
	case !a.Executed:
		color = ansiDim
	}
	return cell{text, color}
}

func outcomeCell(outcome transport.Outcome) cell {
	color := ""
	switch outcomeClass(outcome) {
	case "good":
		color = ansiGreen
	case "warn":
		color = ansiYellow
	case "bad":
		color = ansiRed
	}
	return cell{outcome.String(), color}
}

// writeTable escapes every cell's text (see Escape) and aligns the rows
// with layout.Write: columns two spaces apart, trailing empty cells not
// padded, notes indented under the second column.
func writeTable(w io.Writer, rows []row, paint func(cell) string) {
	out := make([]layout.Row, len(rows))
	for i, r := range rows {
		if r.note != nil {
			out[i].Note = &layout.Cell{Text: Escape(r.note.text), Color: r.note.color}
			continue
		}
		out[i].Cells = make([]layout.Cell, len(r.cells))
		for j, c := range r.cells {
			out[i].Cells[j] = layout.Cell{Text: Escape(c.text), Color: c.color}
		}
	}
	// w is Text's bufio.Writer, whose error Text returns from Flush.
	_ = layout.Write(w, out, func(c layout.Cell) string { return paint(cell{c.Text, c.Color}) })
}

// writeEvents lists what alarms, schedules, queues and agent.Retry did.
func writeEvents(w io.Writer, r Report, paint func(cell) string) {
	if len(r.Events) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, paint(cell{"events: alarms, tasks, retries, resets, WebSockets", ansiBold}))
	rows := make([]row, 0, len(r.Events))
	for _, e := range r.Events {
		rows = append(rows, row{cells: []cell{{"", ""}, {Ms(e.At), ""}, {e.Namespace + "/" + e.Object, ""},
			{string(e.Kind), ansiBlue}, {e.Text(), ""}}})
	}
	writeTable(w, rows, paint)
}

func writeEffects(w io.Writer, r Report, paint func(cell) string) {
	if len(r.Effects) == 0 {
		return
	}
	calls := r.callOfRequest()
	fmt.Fprintln(w)
	fmt.Fprintln(w, paint(cell{"effects", ansiBold}))
	rows := make([]row, 0, len(r.Effects))
	for _, e := range r.Effects {
		by := "outside a call"
		if i, ok := calls[e.RequestID]; ok {
			by = fmt.Sprintf("call %d, attempt %d", i+1, e.Attempt)
		}
		rows = append(rows, row{cells: []cell{{"", ""}, {Ms(e.At), ""}, {e.Namespace + "/" + e.Object, ""},
			{e.Kind, ansiBlue}, {Value(e.Payload), ""}, {by, ansiDim}}})
	}
	writeTable(w, rows, paint)
}

func writeStorage(w io.Writer, r Report) {
	if len(r.Storage) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "storage at the end")
	var rows []row
	for _, o := range r.Storage {
		name := o.Namespace + "/" + o.Object
		if len(o.Data) == 0 {
			rows = append(rows, row{cells: []cell{{"", ""}, {name, ""}, {"(empty)", ""}}})
			continue
		}
		for _, k := range sortedKeys(o.Data) {
			for _, line := range storageLines(k, o.Data[k]) {
				rows = append(rows, row{cells: []cell{{"", ""}, {name, ""}, {line, ""}}})
				name = ""
			}
		}
	}
	writeTable(w, rows, func(c cell) string { return c.text })
}

// storageLines shows one stored key: "key = value", or, for an SQL table
// as a snapshot holds it (object.SQLSnapshotPrefix), the table with its
// columns and then a line per row.
func storageLines(key string, v any) []string {
	name, isSQL := strings.CutPrefix(key, object.SQLSnapshotPrefix)
	t, ok := v.(map[string]any)
	if !isSQL || !ok || t["type"] != "table" {
		return []string{key + " = " + Value(v)}
	}
	cols, _ := t["columns"].([]any)
	rows, _ := t["rows"].([]any)
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = fmt.Sprint(c)
	}
	out := []string{fmt.Sprintf("sql table %s (%s): %d row(s)", name, strings.Join(names, ", "), len(rows))}
	for _, r := range rows {
		out = append(out, "  "+Value(r))
	}
	return out
}

func writeExpectations(w io.Writer, r Report, paint func(cell) string) {
	if r.Expectations == 0 {
		return
	}
	fmt.Fprintln(w)
	if len(r.Failures) == 0 {
		fmt.Fprintln(w, paint(cell{fmt.Sprintf("expectations: all %d met", r.Expectations), ansiGreen}))
		return
	}
	fmt.Fprintln(w, paint(cell{fmt.Sprintf("expectations: %d of %d NOT met", len(r.Failures), r.Expectations), ansiRed}))
	for _, f := range r.Failures {
		fmt.Fprintf(w, "  %s\n", Escape(f.Where))
		fmt.Fprintf(w, "    expected: %s\n", paint(cell{Escape(f.Want), ansiGreen}))
		fmt.Fprintf(w, "    got:      %s\n", paint(cell{Escape(f.Got), ansiRed}))
	}
}
