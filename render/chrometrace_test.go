package render_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shippedReports runs every shipped scenario and returns its report.
func shippedReports(t *testing.T) []render.Report {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "scenarios", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var reports []render.Report
	for _, f := range files {
		sc, err := scenario.Load(f, scenario.WithBuiltInClasses(examples.Constructors()))
		require.NoError(t, err, f)
		res, err := sc.Run()
		require.NoError(t, err, f)
		reports = append(reports, res.Report())
	}
	return reports
}

// traceFile is the Trace Event Format's JSON object form.
type traceFile struct {
	TraceEvents     []render.ChromeEvent `json:"traceEvents"`
	DisplayTimeUnit string               `json:"displayTimeUnit"`
}

// checkTraceRules checks a trace against the Trace Event Format's rules
// (the format's document, "Trace Event Format", Google): every event has a
// phase the format defines, a name, a pid and a tid; a complete event
// ("X") has a duration of at least 0; the X events of one thread nest (one
// ends before the next starts, or holds it whole); an instant event has a
// scope g, p or t; every flow start ("s") has one finish ("f") with its id
// and category, not earlier, and each end lies within an X event of its
// thread (a flow binds to the slice that encloses it); metadata names a
// process or a thread. It returns the events by phase.
//
// It also checks what the viewers read more narrowly than the document:
// instants are "I", the one letter DevTools reads (Perfetto and catapult
// read "i" too); a flow's id is a hexadecimal string, as Perfetto reads a
// string id (it drops a flow whose id is not one); each end of a flow is
// at the start of one X event of its thread and category, the slice
// DevTools binds it to (it takes the first when there are several).
func checkTraceRules(t *testing.T, b []byte) map[string][]render.ChromeEvent {
	t.Helper()
	var tf traceFile
	require.NoError(t, json.Unmarshal(b, &tf), "the trace is one JSON object")
	require.Contains(t, []string{"ms", "ns"}, tf.DisplayTimeUnit)
	byPh := map[string][]render.ChromeEvent{}
	type thread struct{ pid, tid int }
	slices := map[thread][]render.ChromeEvent{}
	for _, e := range tf.TraceEvents {
		require.Contains(t, []string{"X", "I", "s", "f", "M"}, e.Ph, "%+v", e)
		assert.NotEmpty(t, e.Name, "%+v", e)
		assert.Positive(t, e.Pid, "%+v", e)
		assert.GreaterOrEqual(t, e.Ts, 0.0, "%+v", e)
		byPh[e.Ph] = append(byPh[e.Ph], e)
		switch e.Ph {
		case "X":
			require.NotNil(t, e.Dur, "a complete event has a duration: %+v", e)
			assert.GreaterOrEqual(t, *e.Dur, 0.0, "%+v", e)
			slices[thread{e.Pid, e.Tid}] = append(slices[thread{e.Pid, e.Tid}], e)
		case "I":
			assert.Contains(t, []string{"g", "p", "t"}, e.Scope, "%+v", e)
		case "M":
			assert.Contains(t, []string{"process_name", "thread_name", "thread_sort_index"}, e.Name)
			assert.NotNil(t, e.Args, "%+v", e)
		}
	}
	for th, xs := range slices { // nesting: a stack of open slices
		sort.SliceStable(xs, func(i, j int) bool { return xs[i].Ts < xs[j].Ts })
		var open []render.ChromeEvent
		for _, x := range xs {
			for len(open) > 0 && open[len(open)-1].Ts+*open[len(open)-1].Dur <= x.Ts {
				open = open[:len(open)-1]
			}
			if n := len(open); n > 0 {
				top := open[n-1]
				assert.LessOrEqual(t, x.Ts+*x.Dur, top.Ts+*top.Dur, "thread %v: %q overlaps %q without nesting", th, x.Name, top.Name)
			}
			open = append(open, x)
		}
	}
	within := func(e render.ChromeEvent) bool {
		for _, x := range slices[thread{e.Pid, e.Tid}] {
			if x.Ts <= e.Ts && e.Ts <= x.Ts+*x.Dur {
				return true
			}
		}
		return false
	}
	boundInDevTools := func(e render.ChromeEvent) int {
		n := 0
		for _, x := range slices[thread{e.Pid, e.Tid}] {
			if x.Ts == e.Ts && x.Cat == e.Cat {
				n++
			}
		}
		return n
	}
	for _, e := range append(byPh["s"], byPh["f"]...) {
		_, err := strconv.ParseUint(e.ID, 16, 64)
		assert.NoError(t, err, "flow id %q is not a hexadecimal number: Perfetto drops the flow", e.ID)
		assert.Equal(t, 1, boundInDevTools(e), "flow %s (%s): X events of its category %q that start on its thread at %v (DevTools binds it to the first, or to none)", e.ID, e.Ph, e.Cat, e.Ts)
	}
	starts := map[string]render.ChromeEvent{}
	for _, s := range byPh["s"] {
		_, dup := starts[s.ID]
		assert.False(t, dup, "flow id %s starts twice", s.ID)
		starts[s.ID] = s
		assert.True(t, within(s), "flow start %s lies in no slice of its thread", s.ID)
	}
	for _, f := range byPh["f"] {
		s, ok := starts[f.ID]
		require.True(t, ok, "flow finish %s has no start", f.ID)
		assert.Equal(t, s.Cat, f.Cat)
		assert.LessOrEqual(t, s.Ts, f.Ts, "flow %s goes back in time", f.ID)
		assert.Equal(t, "e", f.BP)
		assert.True(t, within(f), "flow finish %s lies in no slice of its thread", f.ID)
		delete(starts, f.ID)
	}
	assert.Empty(t, starts, "flows without a finish")
	return byPh
}

// --format chrome-trace of every shipped scenario keeps the Trace Event
// Format's rules, with a slice per attempt, a turn per attempt the object
// ran, an arrow per retry and an instant per fault, effect and event.
func TestChromeTraceKeepsTheFormatsRules(t *testing.T) {
	reports := shippedReports(t)
	var b bytes.Buffer
	require.NoError(t, render.ChromeTrace(&b, reports...))
	byPh := checkTraceRules(t, b.Bytes())
	attempts, turns, retries, faults, effects, events := 0, 0, 0, 0, 0, 0
	for _, r := range reports {
		effects += len(r.Effects)
		events += len(r.Events)
		for _, c := range r.Calls {
			attempts += len(c.Attempts)
			retries += max(len(c.Attempts)-1, 0)
			for _, a := range c.Attempts {
				if a.Executed || a.Rejected {
					turns++
				}
				if a.Fault.String() != "none" {
					faults++
				}
			}
		}
	}
	cats := map[string]int{}
	for _, e := range append(byPh["X"], byPh["I"]...) {
		cats[e.Cat]++
	}
	assert.Equal(t, attempts, cats["attempt"])
	assert.Equal(t, turns, cats["turn"])
	assert.Equal(t, faults, cats["fault"])
	assert.Equal(t, effects, cats["effect"])
	assert.Equal(t, events, cats["event"])
	assert.Len(t, byPh["s"], retries)
	assert.Positive(t, retries, "the shipped scenarios retry")
	procs := 0
	for _, m := range byPh["M"] {
		if m.Name == "process_name" {
			procs++
		}
	}
	assert.Equal(t, len(reports), procs, "a process per report")

	var again bytes.Buffer
	require.NoError(t, render.ChromeTrace(&again, reports...))
	assert.Equal(t, b.String(), again.String(), "the same records, the same trace")
}

// Attempts that overlap on one object without nesting go on a second
// track of it, so that each track's slices nest as the format requires.
func TestChromeTraceOverlappingAttemptsGetTracksOfTheirOwn(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	r := render.Report{Name: "crossing", Seed: 1, Calls: []runtime.CallRecord{
		{RequestID: "a", Namespace: "B", Object: "x", Method: "Hold", Start: 0, End: ms(20), Outcome: transport.OutcomeOK,
			Attempts: []runtime.AttemptRecord{{N: 1, RequestID: "a", Start: 0, End: ms(20), Delivered: true, Executed: true}}},
		{RequestID: "b", Namespace: "B", Object: "x", Method: "Pay", Start: ms(5), End: ms(30), Outcome: transport.OutcomeRecovered,
			Attempts: []runtime.AttemptRecord{{N: 1, RequestID: "b", Start: ms(5), End: ms(5), Fault: transport.NotDelivered},
				{N: 2, RequestID: "b2", Start: ms(10), End: ms(30), Delivered: true, Executed: true}}},
	}}
	var b bytes.Buffer
	require.NoError(t, render.ChromeTrace(&b, r))
	byPh := checkTraceRules(t, b.Bytes())
	var threads []string
	for _, m := range byPh["M"] {
		if m.Name == "thread_name" {
			threads = append(threads, m.Args["name"].(string))
		}
	}
	assert.Equal(t, []string{"B/x", "B/x #2"}, threads)
	require.Len(t, byPh["s"], 1, "one retry, one arrow")
	assert.Equal(t, 5000.0, byPh["s"][0].Ts, "from the failed attempt (microseconds)")
	assert.Equal(t, 10000.0, byPh["f"][0].Ts, "to its retry")
}

// Issue 36: a run without latency takes no virtual time, and its slices
// were 0 wide in every viewer: no complete slice of the shipped scenarios'
// traces is narrower than chromeMinSlice, and each attempt's args keep its
// real virtual duration.
func TestChromeTraceSlicesHaveAVisibleWidth(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, render.ChromeTrace(&b, shippedReports(t)...))
	var trace struct{ TraceEvents []render.ChromeEvent }
	require.NoError(t, json.Unmarshal(b.Bytes(), &trace))
	slices := 0
	for _, e := range trace.TraceEvents {
		if e.Ph != "X" {
			continue
		}
		slices++
		require.NotNil(t, e.Dur)
		assert.GreaterOrEqual(t, *e.Dur, 1000.0, "%q is %v µs wide", e.Name, *e.Dur)
		if e.Cat == "attempt" {
			assert.Contains(t, e.Args, "virtual duration", e.Name)
		}
	}
	assert.Positive(t, slices)
}
