package render_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/internal/browsertest"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pageDOM is what the page shows a person, read from the browser's DOM.
type pageDOM struct {
	Sections []sectionDOM `json:"sections"`
}

// sectionDOM is one report's section of the page.
type sectionDOM struct {
	ID       string       `json:"id"`
	Title    string       `json:"title"`
	SVGWidth float64      `json:"svgWidth"`
	Calls    []string     `json:"calls"`    // the SVG's call labels (their tooltips)
	Attempts []drawnDOM   `json:"attempts"` // the SVG's attempt boxes
	Crosses  []drawnDOM   `json:"crosses"`  // the SVG's fault crosses
	Rows     []attemptRow `json:"rows"`     // the call table's attempt rows
}

// drawnDOM is a drawn SVG group: its tooltip, its size on the page, and
// the colour it is drawn in.
type drawnDOM struct {
	Title  string  `json:"title"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
	Stroke string  `json:"stroke"`
}

// attemptRow is one attempt's row of the table of calls and attempts.
type attemptRow struct {
	First     bool   `json:"first"` // the call's first row (class "call")
	Call      string `json:"call"`  // the call's number, on its first row
	Start     string `json:"start"`
	End       string `json:"end"`
	Try       string `json:"try"`
	Link      string `json:"link"`
	LinkClass string `json:"linkClass"`
	LinkColor string `json:"linkColor"` // the computed colour of the link cell
}

// readDOM collects, for each report's section, the calls and attempts as
// the browser laid them out. Sizes and colours are computed by the browser:
// an element it did not draw has no size.
const readDOM = `(() => {
  const size = (el) => { const r = el.getBoundingClientRect(); return [r.width, r.height]; };
  const out = {sections: []};
  for (const sec of document.querySelectorAll('section.report')) {
    const s = {id: sec.id, title: (sec.querySelector('h2') || {}).textContent || '', svgWidth: 0,
      calls: [], attempts: [], crosses: [], rows: []};
    const svg = sec.querySelector('.timeline svg');
    if (svg) {
      s.svgWidth = size(svg)[0];
      for (const g of svg.querySelectorAll('g')) {
        const title = g.querySelector(':scope > title');
        if (!title) continue;
        const t = title.textContent;
        const [w, h] = size(g);
        if (/^#\d+ /.test(t)) {
          s.calls.push(t);
        } else if (t.startsWith('attempt ')) {
          const box = g.querySelector(':scope > rect:last-of-type');
          const path = g.querySelector(':scope > path');
          if (box) s.attempts.push({title: t, width: w, height: h, stroke: getComputedStyle(box).stroke});
          else if (path) s.crosses.push({title: t, width: w, height: h, stroke: getComputedStyle(path).stroke});
        }
      }
    }
    const h3 = [...sec.querySelectorAll('h3')].find((h) => h.textContent === 'Calls and attempts');
    const table = h3 && h3.nextElementSibling;
    if (table && table.tBodies.length) {
      for (const tr of table.tBodies[0].rows) {
        const c = tr.cells;
        if (c.length !== 9) continue; // a call's error line
        s.rows.push({first: tr.classList.contains('call'), call: c[0].textContent, start: c[1].textContent,
          end: c[2].textContent, try: c[5].textContent, link: c[6].textContent, linkClass: c[6].className,
          linkColor: getComputedStyle(c[6]).color});
      }
    }
    out.sections.push(s);
  }
  return out;
})()`

// The colours the page draws faults in (render/html.go), as the browser
// computes them.
const (
	crossColour     = "rgb(220, 38, 38)" // #dc2626, the cross
	faultCellColour = "rgb(185, 28, 28)" // #b91c1c, .fault in the table
)

// TestHTMLTimelineInBrowser opens the HTML page of every shipped scenario,
// and of all of them at once as `dosim run --format html
// testdata/scenarios/*.yaml` writes it, in a real headless Chromium. The
// page must load with no script error, console error or request for
// anything but itself; every call and every attempt of the run must be in
// the DOM (the SVG timeline and the table) and drawn; every attempt the
// link failed must be marked with a red cross and a red cell.
func TestHTMLTimelineInBrowser(t *testing.T) {
	bin := browsertest.Path(t)

	files, err := filepath.Glob(filepath.Join("..", "testdata", "scenarios", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no shipped scenarios found")
	var reports []render.Report
	for _, f := range files {
		sc, err := scenario.Load(f, scenario.WithBuiltInClasses(examples.Constructors()))
		require.NoError(t, err, f)
		res, err := sc.Run()
		require.NoError(t, err, f)
		reports = append(reports, res.Report())
	}

	dir := t.TempDir()
	profile := filepath.Join(dir, "profile") // a fresh profile, removed with dir
	require.NoError(t, os.Mkdir(profile, 0o700))
	browser := browsertest.Start(t, bin, profile)

	faulted := 0
	for i, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			faulted += checkPage(t, browser, filepath.Join(dir, name+".html"), reports[i])
		})
	}
	t.Run("all scenarios on one page", func(t *testing.T) {
		checkPage(t, browser, filepath.Join(dir, "all.html"), reports...)
	})
	assert.Positive(t, faulted, "no shipped scenario has a link fault: the check that faults are marked checked nothing")
}

// checkPage renders the reports to file, opens it in a new tab and checks
// what the browser shows against the run's records. It returns how many
// attempts the link failed.
func checkPage(t *testing.T, browser context.Context, file string, reports ...render.Report) int {
	t.Helper()
	var page bytes.Buffer
	require.NoError(t, render.HTML(&page, reports...))
	require.NoError(t, os.WriteFile(file, page.Bytes(), 0o600))
	pageURL := (&url.URL{Scheme: "file", Path: file}).String()

	tab, closeTab := chromedp.NewContext(browser)
	defer closeTab()
	var (
		mu       sync.Mutex
		problems []string
	)
	report := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	// Listen opens the tab; it lives as long as tab.
	require.NoError(t, chromedp.Listen(tab, func(ev any) {
		switch ev := ev.(type) {
		case *cdpruntime.EventExceptionThrown:
			report("script exception: %s", exceptionText(ev.ExceptionDetails))
		case *cdpruntime.EventConsoleAPICalled:
			if ev.Type == cdpruntime.ConsoleAPICalledTypeError || ev.Type == cdpruntime.ConsoleAPICalledTypeAssert || ev.Type == cdpruntime.ConsoleAPICalledTypeWarning {
				report("console.%s: %s", ev.Type, argsText(ev.Args))
			}
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.EntryLevelError {
				report("browser log error (%s): %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
			}
		case *network.EventRequestWillBeSent:
			if ev.Request.URL != pageURL {
				report("the page requested %s: it must load nothing", ev.Request.URL)
			}
		case *network.EventLoadingFailed:
			report("loading failed: %s", ev.ErrorText)
		}
	}))

	ctx, cancel := context.WithTimeout(tab, browsertest.Step)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(pageURL)), "opening %s", pageURL)
	dom, err := chromedp.Run(ctx, chromedp.Evaluate[pageDOM](readDOM))
	var exc *chromedp.ExceptionError
	if errors.As(err, &exc) {
		t.Fatalf("reading the DOM: %s", exceptionText(exc.ExceptionDetails))
	}
	require.NoError(t, err, "reading the DOM")
	// Events of the load may still be on their way: a round trip to the
	// tab after them flushes them.
	_, err = chromedp.Run(ctx, chromedp.Evaluate[int](`1`))
	require.NoError(t, err)

	mu.Lock()
	assert.Empty(t, problems, "the page must load without a script error, a console error or a request")
	mu.Unlock()

	require.Len(t, dom.Sections, len(reports), "a section per report")
	faulted := 0
	for k, r := range reports {
		faulted += checkSection(t, dom.Sections[k], k, r)
	}
	return faulted
}

// checkSection compares one report's section with the run's records and
// returns how many attempts the link failed.
func checkSection(t *testing.T, s sectionDOM, k int, r render.Report) int {
	t.Helper()
	where := fmt.Sprintf("%s (section %d)", r.File, k+1)
	assert.Equal(t, fmt.Sprintf("report-%d", k+1), s.ID, where)
	assert.True(t, strings.HasPrefix(s.Title, r.Name), "%s: title %q, want the scenario's name %q", where, s.Title, r.Name)
	if len(r.Calls) == 0 {
		assert.Empty(t, s.Rows, where)
		return 0
	}
	assert.Positive(t, s.SVGWidth, "%s: the timeline is not drawn", where)

	// Every call has its label in the timeline.
	var wantCalls []string
	for i := range r.Calls {
		wantCalls = append(wantCalls, fmt.Sprintf("#%d", i+1))
	}
	var gotCalls []string
	for _, c := range s.Calls {
		gotCalls = append(gotCalls, strings.Fields(c)[0])
	}
	slices.SortFunc(gotCalls, func(a, b string) int { return callNumber(a) - callNumber(b) })
	assert.Equal(t, wantCalls, gotCalls, "%s: a label per call in the timeline", where)

	// Every attempt has its box in the timeline and its row in the table,
	// in order, and the link failures are marked.
	var (
		wantRows, gotRows         []string
		wantBoxes, wantCrosses    []string
		wantFaultCells            int
		faulted                   int
		gotBoxes, gotCrosses      []string
		gotFaultCells, notVisible []string
	)
	for i, c := range r.Calls {
		for j, a := range c.Attempts {
			call := ""
			if j == 0 {
				call = strconv.Itoa(i + 1)
			}
			wantRows = append(wantRows, fmt.Sprintf("call %q first=%v try %d %s-%s link %q", call, j == 0, a.N, render.Ms(a.Start), render.Ms(a.End), a.LinkText()))
			tip := fmt.Sprintf("attempt %d: %s to %s; link: %s", a.N, render.Ms(a.Start), render.Ms(a.End), a.LinkText())
			wantBoxes = append(wantBoxes, tip)
			if a.Fault != transport.None {
				wantCrosses = append(wantCrosses, tip)
				faulted++
			}
			if a.Fault != transport.None || a.Cancelled {
				wantFaultCells++
			}
		}
	}
	for _, row := range s.Rows {
		gotRows = append(gotRows, fmt.Sprintf("call %q first=%v try %s %s-%s link %q", row.Call, row.First, row.Try, row.Start, row.End, row.Link))
		if strings.Contains(" "+row.LinkClass+" ", " fault ") {
			gotFaultCells = append(gotFaultCells, row.Link)
			assert.Equal(t, faultCellColour, row.LinkColor, "%s: the fault cell %q is not drawn red", where, row.Link)
		}
	}
	// tipHead is a tooltip up to the link: the object's part may vary.
	tipHead := func(title string) string {
		if i := strings.Index(title, "; object:"); i >= 0 {
			return title[:i]
		}
		return title
	}
	for _, b := range s.Attempts {
		gotBoxes = append(gotBoxes, tipHead(b.Title))
		if b.Width <= 0 || b.Height <= 0 {
			notVisible = append(notVisible, "box "+b.Title)
		}
	}
	for _, c := range s.Crosses {
		gotCrosses = append(gotCrosses, tipHead(c.Title))
		if c.Width <= 0 || c.Height <= 0 {
			notVisible = append(notVisible, "cross "+c.Title)
		}
		assert.Equal(t, crossColour, c.Stroke, "%s: the cross for %q is not drawn red", where, c.Title)
	}
	assert.Equal(t, wantRows, gotRows, "%s: a table row per attempt, in order", where)
	slices.Sort(wantBoxes)
	slices.Sort(gotBoxes)
	assert.Equal(t, wantBoxes, gotBoxes, "%s: a box per attempt in the timeline", where)
	slices.Sort(wantCrosses)
	slices.Sort(gotCrosses)
	assert.Equal(t, wantCrosses, gotCrosses, "%s: a cross per link fault in the timeline", where)
	assert.Len(t, gotFaultCells, wantFaultCells, "%s: a red link cell per failed or cancelled attempt", where)
	assert.Empty(t, notVisible, "%s: elements in the DOM that the browser did not draw", where)
	t.Logf("%s: %d calls, %d attempt boxes, %d table rows, %d fault crosses, %d red link cells",
		where, len(s.Calls), len(s.Attempts), len(s.Rows), len(s.Crosses), len(gotFaultCells))
	return faulted
}

// callNumber reads "#12" as 12.
func callNumber(s string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(s, "#"))
	return n
}

// exceptionText says what a script exception was.
func exceptionText(d *cdpruntime.ExceptionDetails) string {
	if d == nil {
		return "(no details)"
	}
	s := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		s += ": " + d.Exception.Description
	}
	return fmt.Sprintf("%s (line %d, column %d)", s, d.LineNumber, d.ColumnNumber)
}

// argsText joins the arguments of a console call.
func argsText(args []*cdpruntime.RemoteObject) string {
	var parts []string
	for _, a := range args {
		switch {
		case a.Description != "":
			parts = append(parts, a.Description)
		case len(a.Value) > 0:
			parts = append(parts, string(a.Value))
		default:
			parts = append(parts, string(a.Type))
		}
	}
	return strings.Join(parts, " ")
}
