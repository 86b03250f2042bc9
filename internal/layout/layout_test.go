package layout_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/internal/layout"
)

func Example() {
	row := func(s ...string) layout.Row {
		var r layout.Row
		for _, t := range s {
			r.Cells = append(r.Cells, layout.Cell{Text: t})
		}
		return r
	}
	_ = layout.Write(os.Stdout, []layout.Row{
		row("#", "START", "END", "OUTCOME"),
		row("1", layout.Ms(0), layout.Ms(347*time.Millisecond), "recovered"),
		{Note: &layout.Cell{Text: "error: none"}},
		row("2", layout.Ms(1500*time.Microsecond), "", ""),
	}, nil)
	// Output:
	// #  START  END    OUTCOME
	// 1  0s     347ms  recovered
	//    error: none
	// 2  1.5ms
}

// Write counts widths in runes, pads every cell but the last non-empty one
// of its row, and paints each cell it writes (not the padding).
func TestWriteAlignsInRunesAndPaintsCells(t *testing.T) {
	var b strings.Builder
	rows := []layout.Row{
		{Cells: []layout.Cell{{Text: "ü"}, {Text: "b", Color: "<"}, {Text: ""}}},
		{Cells: []layout.Cell{{Text: "ccc"}, {Text: ""}, {Text: "d"}}},
		{Note: &layout.Cell{Text: "n", Color: "<"}},
	}
	paint := func(c layout.Cell) string {
		if c.Color == "" {
			return c.Text
		}
		return c.Color + c.Text + ">"
	}
	if err := layout.Write(&b, rows, paint); err != nil {
		t.Fatal(err)
	}
	want := "ü    <b>\nccc     d\n     <n>\n"
	if b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
}

// Ms writes times in Go's duration syntax at every scale: a reader sees
// "1h0m1.862s", not "3601862ms".
func TestMs(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0s", 379 * time.Millisecond: "379ms", time.Minute: "1m0s", 1500 * time.Microsecond: "1.5ms",
		time.Nanosecond: "1ns", 2347 * time.Millisecond: "2.347s", 3601862 * time.Millisecond: "1h0m1.862s"} {
		if got := layout.Ms(d); got != want {
			t.Errorf("Ms(%v) = %q, want %q", d, got, want)
		}
	}
}
