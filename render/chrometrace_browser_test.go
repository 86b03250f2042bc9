package render_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/dosim/dosim/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// traceImport is what the browser's trace viewer made of a trace.
type traceImport struct {
	Viewer  string   `json:"viewer"` // "chrome://tracing", or "" when the browser has none
	Error   string   `json:"error"`
	Slices  int      `json:"slices"`
	Threads []string `json:"threads"`
	Flows   int      `json:"flows"`
}

// importTrace is run in chrome://tracing: it imports the trace with the
// viewer's own importer (catapult's tr.Model) and counts what it built.
const importTrace = `(async () => {
  if (typeof tr === 'undefined' || !tr.Model) return {viewer: '', error: location.href + ' ' + document.title + ' ' + document.body.innerText.slice(0, 200)};
  const out = {viewer: 'chrome://tracing', slices: 0, threads: [], flows: 0};
  try {
    const m = new tr.Model();
    const imp = new tr.importer.Import(m, new tr.importer.ImportOptions());
    imp.importTraces([TRACE]);
    for (const p of Object.values(m.processes)) {
      for (const th of Object.values(p.threads)) {
        out.threads.push(th.name);
        out.slices += th.sliceGroup.slices.length;
      }
    }
    out.flows = m.flowEvents.length;
    if (m.importWarnings && m.importWarnings.length) out.error = m.importWarnings.map(w => w.message).join('; ');
  } catch (e) { out.error = String(e); }
  return out;
})()`

// The chrome-trace of every shipped scenario loads in the trace viewer
// of a real headless Chromium (chrome://tracing, the importer Perfetto's
// legacy JSON support follows), without import warnings, with every
// attempt and turn as a slice and every retry as a flow. It skips where
// no Chromium is installed, or where the browser has no chrome://tracing.
func TestChromeTraceInBrowser(t *testing.T) {
	bin := chromiumPath(t)
	reports := shippedReports(t)
	var b bytes.Buffer
	require.NoError(t, render.ChromeTrace(&b, reports...))
	want := checkTraceRules(t, b.Bytes())

	profile := filepath.Join(t.TempDir(), "profile")
	require.NoError(t, os.Mkdir(profile, 0o700))
	// Chromium shows its debugging pages (chrome://tracing among them)
	// only with this local-state preference (chrome://chrome-urls's switch).
	require.NoError(t, os.WriteFile(filepath.Join(profile, "Local State"), []byte(`{"internal_only_uis_enabled": true}`), 0o600))
	browser := startChromium(t, bin, profile)
	tab, cancel := chromedp.NewContext(browser)
	defer cancel()
	ctx, stop := context.WithTimeout(tab, browserStep)
	defer stop()
	js, err := json.Marshal(b.String()) // the trace as a JavaScript string
	require.NoError(t, err)
	script := strings.Replace(importTrace, "TRACE", string(js), 1)
	if err := chromedp.Do(ctx, chromedp.Navigate("chrome://tracing")); err != nil {
		t.Skipf("this Chromium does not open chrome://tracing: %v", err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[traceImport](script, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	if got.Viewer == "" {
		t.Skipf("this Chromium has no chrome://tracing trace viewer (%s)", got.Error)
	}
	assert.Empty(t, got.Error, "the viewer's import warnings")
	assert.Equal(t, len(want["X"]), got.Slices, "every attempt and turn is a slice")
	assert.Equal(t, len(want["s"]), got.Flows, "every retry is a flow")
	assert.Contains(t, got.Threads, "INVENTORY/shop")
}
