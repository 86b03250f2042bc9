package explore_test

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/internal/browsertest"
	"github.com/dosim/dosim/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// linearPageDOM is what a 1280-pixel-wide window shows of a
// linearizability page.
type linearPageDOM struct {
	Width   float64   `json:"width"`   // the document's scroll width
	Right   []float64 `json:"right"`   // each box's right edge
	Cut     []string  `json:"cut"`     // the labels wider than their box
	Labels  []string  `json:"labels"`  // the boxes' labels
	Rows    []string  `json:"rows"`    // the operations table, row by row
	Visible int       `json:"visible"` // the boxes that start inside the window
}

const readLinearPage = `(() => {
  const groups = [...document.querySelectorAll('#canvas g > g')].filter((g) => g.querySelector('rect.history-rect'));
  const boxes = groups.map((g) => ({rect: g.querySelector('rect').getBoundingClientRect(), text: g.querySelector('text')}));
  return {
    width: document.documentElement.scrollWidth,
    right: boxes.map((b) => b.rect.right),
    cut: boxes.filter((b) => b.text.getBoundingClientRect().width > b.rect.width).map((b) => b.text.textContent),
    labels: boxes.map((b) => b.text.textContent),
    rows: [...document.querySelectorAll('#operations tr')].slice(1).map((tr) => tr.innerText),
    visible: boxes.filter((b) => b.rect.left < window.innerWidth).length,
  };
})()`

// C10, in a real Chromium: the linearizability page of a booth that
// charges twice (booth-leaky, seed 8: nine operations, whole calls up to
// 80 characters long) fits a 1280-pixel-wide window: every operation's box
// starts and ends inside it, no label is wider than its box, and the table
// under the drawing names every operation in full. Porcupine's own labels
// (the whole call) drew it 4,577 pixels wide, two boxes in view and seven
// rows that looked empty.
func TestC10_TheLinearizabilityPageIsReadableAt1280(t *testing.T) {
	bin := browsertest.Path(t)
	e, err := explore.New(load(t, "booth-leaky"), explore.Options{})
	require.NoError(t, err)
	r, err := e.Check(8)
	require.NoError(t, err)
	h := r.Linear["BOOTH/show-42"]
	require.NotNil(t, h, "seed 8 violates linearizability: %v", r.Violations)
	var page bytes.Buffer
	require.NoError(t, h.Visualize(&page))

	dir := t.TempDir()
	profile := filepath.Join(dir, "profile")
	require.NoError(t, os.Mkdir(profile, 0o700))
	browser := browsertest.Start(t, bin, profile)
	file := filepath.Join(dir, "linearizability.html")
	require.NoError(t, os.WriteFile(file, page.Bytes(), 0o600))
	tab, closeTab := chromedp.NewContext(browser)
	defer closeTab()
	ctx, cancel := context.WithTimeout(tab, browsertest.Step)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)))
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate((&url.URL{Scheme: "file", Path: file}).String())))
	dom, err := chromedp.Run(ctx, chromedp.Evaluate[linearPageDOM](readLinearPage))
	require.NoError(t, err)

	require.Len(t, dom.Labels, 9, "eight operations and the end state")
	assert.LessOrEqual(t, dom.Width, 1280.0, "the page fits the window")
	assert.Equal(t, 9, dom.Visible, "every box starts in view")
	for i, right := range dom.Right {
		assert.LessOrEqual(t, right, 1280.0, "box %d (%s) ends in view", i, dom.Labels[i])
	}
	assert.Empty(t, dom.Cut, "no label is cut off")
	assert.Equal(t, "#1 Hold", dom.Labels[0])
	require.Len(t, dom.Rows, 9)
	assert.Contains(t, dom.Rows[0], `Hold("bob-1", 2, "bob") -> ok "seat 2 held by bob until 2025-01-01 00:15:00"`)
	assert.True(t, strings.HasPrefix(strings.TrimSpace(dom.Rows[8]), "8"), dom.Rows[8])
	assert.Contains(t, dom.Rows[8], `end state: the object was left with`)
	assert.Contains(t, dom.Rows[8], `charge "ada-1"; email "your seat is confirmed: ada-1"; charge "ada-1"`, "what went wrong: the second charge")
}

// hostileMail sends one email whose subject is markup and a
// bidirectional override, and loses its reply once: the marked Send runs
// twice, a linearizability violation whose page shows the subject.
const hostileMail = `name: hostile
namespaces: {MAIL: mailer}
stubs: {mail: {namespace: MAIL, object: newsletter}}
faults:
  rules: [{namespace: MAIL, method: Send, attempt: 1, fault: lose-response}]
calls:
  - {stub: mail, method: Send, args: [ada@example.com, "<img src=x onerror=alert(1)>` + "\u202e" + `evil"]}
`

// H2: what reaches the linearizability page's HTML from a run (a call's
// arguments, stored values, effects: the tooltips porcupine writes as HTML
// and the table under the drawing) is escaped: no markup comes through,
// and a bidirectional override is written as \u202e.
func TestH2_TheLinearizabilityPageEscapesWhatARunHeld(t *testing.T) {
	sc, err := scenario.Parse("hostile.yaml", []byte(hostileMail), builtIns)
	require.NoError(t, err)
	e, err := explore.New(sc, explore.Options{KeepRules: true})
	require.NoError(t, err)
	r, err := e.Check(1)
	require.NoError(t, err)
	h := r.Linear["MAIL/newsletter"]
	require.NotNil(t, h, "the marked Send ran twice: %v", r.Violations)
	var page bytes.Buffer
	require.NoError(t, h.Visualize(&page))
	html := page.String()
	assert.NotContains(t, html, "<img", "markup from the run")
	assert.NotContains(t, html, "\u202e", "a raw bidirectional override")
	assert.Contains(t, html, `\u003cimg src=x onerror=alert(1)\u003e\u202eevil`, "the subject, escaped, in the table")
}
