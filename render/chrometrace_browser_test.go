package render_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/dosim/dosim/internal/browsertest"
	"github.com/dosim/dosim/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// devtoolsTimeline is the Performance panel of the DevTools frontend that
// Chromium ships inside itself. Recent Chromium has no chrome://tracing
// (156 has none); this panel opens Trace Event JSON instead. It needs no
// page to inspect and no network: the frontend is in the browser's own
// resources.
const devtoolsTimeline = "devtools://devtools/bundled/devtools_app.html?panel=timeline"

// devtoolsLoad is the wall-clock bound of loading the trace in the panel.
// It stops a hung browser; nothing asserts on speed.
const devtoolsLoad = 2 * time.Minute

// panelView is what the Performance panel made of a trace, read from the
// panel's flame chart (what it draws) and from its trace model.
type panelView struct {
	Missing  string       `json:"missing"` // what of the DevTools frontend this browser lacks
	Error    string       `json:"error"`   // the panel's error loading the trace
	Warnings []string     `json:"warnings"`
	Flows    int          `json:"flows"`   // flows the trace model built
	Groups   []panelGroup `json:"groups"`  // the flame chart's groups: a header per process, a track per thread
	Entries  []panelEntry `json:"entries"` // the flame chart's entries, by index
	Arrows   []panelArrow `json:"arrows"`  // arrows the flame chart draws when an entry is selected
}

// panelGroup is a group of the flame chart: nesting 0 a process's
// header, 1 a thread's track.
type panelGroup struct {
	Name       string `json:"name"`
	StartLevel int    `json:"startLevel"`
	Nesting    int    `json:"nesting"`
}

// panelEntry is an entry of the flame chart: its level (row), the title
// drawn on it, and the trace event it draws.
type panelEntry struct {
	Level   int    `json:"level"`
	Title   string `json:"title"`
	Pid     int    `json:"pid"`
	Tid     int    `json:"tid"`
	Call    int    `json:"call"`    // args.call of an attempt, else 0
	Attempt int    `json:"attempt"` // args.attempt of an attempt, else 0
}

// panelArrow is an arrow the flame chart draws between two entries.
type panelArrow struct {
	From int `json:"from"`
	To   int `json:"to"`
}

// loadInPanel loads the trace in the Performance panel the way its "Load
// profile" button and a dropped file do (TimelinePanel.loadFromFile), waits
// for the panel to finish, and reads its flame chart: the groups, every
// entry, and, for each entry in turn, the arrows the chart draws when that
// entry is selected (buildFlowForInitiator, which selection calls).
const loadInPanel = `(async () => {
  const out = {missing: '', error: '', warnings: [], flows: 0, groups: [], entries: [], arrows: []};
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  let Tl;
  try { Tl = await import('./panels/timeline/timeline.js'); } catch (e) { out.missing = 'the module panels/timeline/timeline.js (' + e + ')'; return out; }
  const P = Tl.TimelinePanel && Tl.TimelinePanel.TimelinePanel;
  for (const m of ['loadFromFile', 'hasActiveTrace', 'getFlameChart', 'getParsedTraceForLayoutTests']) {
    if (!P || typeof P.prototype[m] !== 'function') { out.missing = 'TimelinePanel.' + m; return out; }
  }
  let panel;
  while (!panel) { try { panel = P.instance(); } catch (e) { await sleep(50); } }
  // The loader tells the panel (its client) loadingComplete or
  // recordingFailed; the panel's trace is set when loadingComplete ends.
  let ended = '';
  for (const m of ['loadingComplete', 'recordingFailed']) {
    const orig = panel[m];
    panel[m] = async function (...args) {
      try { return await orig.apply(this, args); } finally { ended = ended || m + (m === 'recordingFailed' ? ': ' + args[0] : ''); }
    };
  }
  await panel.loadFromFile(new File([TRACE], 'dosim.json', {type: 'application/json'}));
  while (!ended) await sleep(50);
  if (!panel.hasActiveTrace()) { out.error = 'the panel has no trace after loading: ' + ended + ' (state ' + panel.state + ')'; return out; }
  const data = panel.getParsedTraceForLayoutTests();
  for (const w of data.Warnings.perWarning.keys()) out.warnings.push(String(w));
  out.flows = data.Flows.flows.length;
  const dp = panel.getFlameChart().getMainDataProvider();
  for (const m of ['timelineData', 'entryTitle', 'eventByIndex', 'buildFlowForInitiator']) {
    if (typeof dp[m] !== 'function') { out.missing = 'the flame chart data provider\'s ' + m; return out; }
  }
  const td = dp.timelineData();
  for (const g of td.groups) out.groups.push({name: g.name, startLevel: g.startLevel, nesting: g.style.nestingLevel});
  for (let i = 0; i < td.entryLevels.length; i++) {
    const e = dp.eventByIndex(i) || {};
    const args = e.args || {};
    out.entries.push({level: td.entryLevels[i], title: dp.entryTitle(i) || '', pid: e.pid || 0, tid: e.tid || 0,
      call: args.call || 0, attempt: args.attempt || 0});
  }
  const seen = new Set();
  for (let i = 0; i < td.entryLevels.length; i++) {
    dp.buildFlowForInitiator(i);
    for (const a of dp.timelineData().initiatorsData || []) {
      const key = a.initiatorIndex + '>' + a.eventIndex;
      if (!seen.has(key)) { seen.add(key); out.arrows.push({from: a.initiatorIndex, to: a.eventIndex}); }
    }
  }
  return out;
})()`

// The chrome-trace of every shipped scenario opens in the Performance
// panel of the DevTools that a real headless Chromium ships (the viewer
// that replaced chrome://tracing), loaded as a file is: with no error or
// warning; with a header per report named after it and, under it, a
// track per object named after it; with every attempt, turn and instant
// drawn on the track of its object; and with an arrow from each attempt
// to its retry, drawn when one of them is selected. It skips where no
// Chromium is installed, or where the browser lacks the DevTools
// frontend or the panel's functions it drives.
func TestChromeTraceInBrowser(t *testing.T) {
	bin := browsertest.Path(t)
	reports := shippedReports(t)
	var b bytes.Buffer
	require.NoError(t, render.ChromeTrace(&b, reports...))
	want := checkTraceRules(t, b.Bytes())

	profile := t.TempDir()
	browser := browsertest.Start(t, bin, profile)
	tab, closeTab := chromedp.NewContext(browser)
	defer closeTab()
	var (
		mu       sync.Mutex
		problems []string
		requests []string // every URL the tab asked for
	)
	require.NoError(t, chromedp.Listen(tab, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *cdpruntime.EventExceptionThrown:
			problems = append(problems, "script exception: "+exceptionText(ev.ExceptionDetails))
		case *cdpruntime.EventConsoleAPICalled:
			if ev.Type == cdpruntime.ConsoleAPICalledTypeError || ev.Type == cdpruntime.ConsoleAPICalledTypeAssert {
				problems = append(problems, fmt.Sprintf("console.%s: %s", ev.Type, argsText(ev.Args)))
			}
		case *network.EventRequestWillBeSent:
			requests = append(requests, ev.Request.URL)
		}
	}))
	ctx, stop := context.WithTimeout(tab, devtoolsLoad)
	defer stop()
	if err := chromedp.Do(ctx, chromedp.Navigate(devtoolsTimeline)); err != nil {
		t.Skipf("this Chromium does not open its DevTools frontend (%s): %v", devtoolsTimeline, err)
	}
	js, err := json.Marshal(b.String()) // the trace as a JavaScript string
	require.NoError(t, err)
	got, err := chromedp.Run(ctx, chromedp.Evaluate[panelView](strings.Replace(loadInPanel, "TRACE", string(js), 1), chromedp.EvalAwaitPromise))
	require.NoError(t, err, "loading the trace in the Performance panel")
	if got.Missing != "" {
		t.Skipf("this Chromium's DevTools frontend lacks %s: the test drives the Performance panel through it", got.Missing)
	}
	require.Empty(t, got.Error)
	mu.Lock()
	assert.Empty(t, problems, "the panel loads the trace without a script error")
	var outside []string
	for _, u := range requests {
		if !strings.HasPrefix(u, "devtools://") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "blob:") {
			outside = append(outside, u)
		}
	}
	assert.Empty(t, outside, "the panel must load nothing from outside the browser")
	t.Logf("%d requests, all inside the browser", len(requests))
	mu.Unlock()
	assert.Empty(t, got.Warnings, "the trace model's warnings")

	checkPanelTracks(t, got, want)
	checkPanelArrows(t, got, want["s"])
	t.Logf("the Performance panel drew %d groups, %d entries and %d retry arrows", len(got.Groups), len(got.Entries), len(got.Arrows))
}

// checkPanelTracks checks that every X and I event of the trace is an
// entry of the flame chart, on the track named after its thread, under the
// header named after its process. DevTools adds the id to a name: "BOOTH/x
// (1)".
func checkPanelTracks(t *testing.T, got panelView, want map[string][]render.ChromeEvent) {
	t.Helper()
	type thread struct{ pid, tid int }
	procName, threadName := map[int]string{}, map[thread]string{}
	for _, m := range want["M"] {
		switch m.Name {
		case "process_name":
			procName[m.Pid] = m.Args["name"].(string)
		case "thread_name":
			threadName[thread{m.Pid, m.Tid}] = m.Args["name"].(string)
		}
	}
	named := func(shown, name string) bool { return shown == name || strings.HasPrefix(shown, name+" (") }

	var wantEntries, gotEntries []string
	for _, e := range append(slices.Clone(want["X"]), want["I"]...) {
		wantEntries = append(wantEntries, fmt.Sprintf("%s | %s | %s", procName[e.Pid], threadName[thread{e.Pid, e.Tid}], e.Name))
	}
	groups := slices.Clone(got.Groups)
	slices.SortStableFunc(groups, func(a, b panelGroup) int { return a.StartLevel - b.StartLevel })
	misplaced := 0
	for _, e := range got.Entries {
		track, header := -1, -1
		for i, g := range groups {
			if g.StartLevel <= e.Level {
				track = i
			}
		}
		for i := track; i >= 0; i-- {
			if groups[i].Nesting == 0 {
				header = i
				break
			}
		}
		if track < 0 || header < 0 || groups[track].Nesting != 1 {
			t.Errorf("entry %q (level %d) is drawn on no track of a process", e.Title, e.Level)
			continue
		}
		p, th := procName[e.Pid], threadName[thread{e.Pid, e.Tid}]
		if !named(groups[header].Name, p) || !named(groups[track].Name, th) {
			misplaced++
			t.Errorf("entry %q of %q, %q is drawn under %q, on track %q", e.Title, p, th, groups[header].Name, groups[track].Name)
		}
		gotEntries = append(gotEntries, fmt.Sprintf("%s | %s | %s", p, th, e.Title))
	}
	slices.Sort(wantEntries)
	slices.Sort(gotEntries)
	assert.Equal(t, wantEntries, gotEntries, "an entry per slice and instant of the trace, titled with its name")
	assert.Zero(t, misplaced)
	var tracks []string
	for _, g := range groups {
		tracks = append(tracks, g.Name)
	}
	assert.Contains(t, strings.Join(tracks, "\n"), "\nINVENTORY/shop (", "a track named after the object")
	assert.Contains(t, gotEntries, "dosim: booth (seed 3) | BOOTH/show-42 | Pay try 2", "the retry of Pay, on its object's track")
}

// checkPanelArrows checks that the flame chart draws one arrow per flow of
// the trace, from an attempt to the next attempt of the same call.
func checkPanelArrows(t *testing.T, got panelView, flows []render.ChromeEvent) {
	t.Helper()
	assert.Equal(t, len(flows), got.Flows, "the trace model's flows: one per retry")
	var arrows []string
	for _, a := range got.Arrows {
		require.True(t, a.From >= 0 && a.From < len(got.Entries) && a.To >= 0 && a.To < len(got.Entries), "arrow %+v", a)
		from, to := got.Entries[a.From], got.Entries[a.To]
		ok := from.Pid == to.Pid && from.Call == to.Call && from.Call > 0 && to.Attempt == from.Attempt+1
		assert.True(t, ok, "an arrow from %q (call %d) to %q (call %d): not an attempt to its retry", from.Title, from.Call, to.Title, to.Call)
		arrows = append(arrows, fmt.Sprintf("%d/%d/%d", from.Pid, from.Call, from.Attempt))
	}
	assert.Len(t, arrows, len(flows), "an arrow per retry")
	slices.Sort(arrows)
	assert.Equal(t, len(arrows), len(slices.Compact(arrows)), "one arrow per retry, not two")
}
