// Package layout lays out the text a person reads in a terminal: virtual
// times in milliseconds (Ms) and cells aligned in columns (Write). It is
// the one definition behind runtime.WriteTable and render.Text, so the
// compact call table and the timeline align and write times alike.
package layout

import (
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// Ms formats a virtual time as the tables, timelines and diagrams do, in
// Go's duration syntax, which reads at every scale: "0s", "379ms",
// "1.5ms", "2.347s", "1h0m1.862s" (not "3601862ms"). It is the one
// formatter of times for a reader; JSON gives milliseconds as numbers.
func Ms(d time.Duration) string { return d.String() }

// Cell is one table cell: its text and how to paint it (an ANSI colour, or
// "" for none).
type Cell struct {
	Text  string
	Color string
}

// Row is a table row: its cells, or, when Note is set, a line of its own
// under the row before, indented under the second column, that does not
// count in the column widths.
type Row struct {
	Cells []Cell
	Note  *Cell
}

// Write aligns the rows' cells in columns two spaces apart, each column as
// wide as its widest cell in runes, and writes one line per row. Trailing
// empty cells are not padded. paint turns a cell into the text written (to
// add colours); nil writes the text as it is. Write does not escape: the
// caller makes the texts safe for a terminal.
func Write(w io.Writer, rows []Row, paint func(Cell) string) error {
	if paint == nil {
		paint = func(c Cell) string { return c.Text }
	}
	var widths []int
	for _, r := range rows {
		for i, c := range r.Cells {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c.Text))
		}
	}
	indent := ""
	if len(widths) > 0 {
		indent = strings.Repeat(" ", widths[0]+2)
	}
	var b strings.Builder
	for _, r := range rows {
		b.Reset()
		if r.Note != nil {
			b.WriteString(indent + paint(*r.Note))
		} else {
			last := len(r.Cells) - 1
			for last >= 0 && r.Cells[last].Text == "" {
				last--
			}
			for i := 0; i <= last; i++ {
				c := r.Cells[i]
				b.WriteString(paint(c))
				if i < last {
					b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c.Text)+2))
				}
			}
		}
		b.WriteByte('\n')
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	return nil
}
