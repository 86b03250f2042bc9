package render_test

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/dosim/dosim/internal/browsertest"
	"github.com/dosim/dosim/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// violationDOM is what a browser shows of a page's violations and its
// background work.
type violationDOM struct {
	Violations  string   `json:"violations"`  // the violations block's text
	Drawn       bool     `json:"drawn"`       // it has a size on the page
	FirstBlock  string   `json:"firstBlock"`  // the class of the first block after the title
	AxisLabels  []string `json:"axisLabels"`  // the time axis's labels
	Backgrounds []string `json:"backgrounds"` // the background marks' tooltips
	MarkX       float64  `json:"markX"`       // where the alarm's mark is drawn
	LastTickX   float64  `json:"lastTickX"`   // where the axis's last label is
}

const readViolations = `(() => {
  const sec = document.querySelector('section.report');
  const v = sec.querySelector('.violations');
  const box = v ? v.getBoundingClientRect() : {height: 0};
  const first = sec.querySelector('h2').nextElementSibling;
  const labels = [...sec.querySelectorAll('.timeline svg > text[text-anchor="middle"]')];
  const marks = [...sec.querySelectorAll('.timeline svg g.background')];
  const mid = (el) => { const r = el.getBoundingClientRect(); return r.left + r.width / 2; };
  return {violations: v ? v.innerText : '', drawn: box.height > 0, firstBlock: first ? first.className : '',
    axisLabels: labels.map((t) => t.textContent), backgrounds: marks.map((g) => g.querySelector('title').textContent),
    markX: marks.length ? mid(marks[0]) : -1, lastTickX: labels.length ? mid(labels[labels.length - 1]) : -2};
})()`

// C10, in a real Chromium: the page of a failing run leads with its
// violation, drawn before anything else of the report, and its time axis
// reaches the alarm an hour after the last call, whose mark is drawn
// under the axis's last label.
func TestC10_TheViolationLeadsThePageInBrowser(t *testing.T) {
	bin := browsertest.Path(t)
	dir := t.TempDir()
	profile := filepath.Join(dir, "profile")
	require.NoError(t, os.Mkdir(profile, 0o700))
	browser := browsertest.Start(t, bin, profile)

	var page bytes.Buffer
	r := lateAlarmReport()
	require.NoError(t, render.HTML(&page, r))
	file := filepath.Join(dir, "violation.html")
	require.NoError(t, os.WriteFile(file, page.Bytes(), 0o600))
	tab, closeTab := chromedp.NewContext(browser)
	defer closeTab()
	ctx, cancel := context.WithTimeout(tab, browsertest.Step)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate((&url.URL{Scheme: "file", Path: file}).String())))
	dom, err := chromedp.Run(ctx, chromedp.Evaluate[violationDOM](readViolations))
	require.NoError(t, err)

	assert.Equal(t, "violations", dom.FirstBlock, "the violation is the page's headline")
	assert.True(t, dom.Drawn)
	assert.Contains(t, dom.Violations, r.Violations[0])
	assert.Equal(t, render.Ms(time.Hour), dom.AxisLabels[len(dom.AxisLabels)-1], "the axis spans the alarm")
	assert.Contains(t, dom.Backgrounds, "alarm retry=0 at "+render.Ms(time.Hour))
	assert.InDelta(t, dom.LastTickX, dom.MarkX, 1, "the alarm is drawn at its time")
}
