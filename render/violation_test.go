package render_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lateAlarmReport is a run whose one call ends at 10ms and whose object's
// alarm runs an hour later, and which a checker found a violation in.
func lateAlarmReport() render.Report {
	return render.Report{
		Name: "late alarm", Seed: 3,
		Calls: []runtime.CallRecord{{RequestID: "r1", Namespace: "NS", Object: "o", Method: "Pay", Start: 0, End: 10 * time.Millisecond,
			Attempts: []runtime.AttemptRecord{{N: 1, RequestID: "r1", Start: 0, End: 10 * time.Millisecond, Delivered: true, Executed: true}}}},
		Events:     []object.Event{{At: time.Hour, Namespace: "NS", Object: "o", Kind: "alarm"}},
		Effects:    []runtime.Effect{{At: time.Hour, Namespace: "NS", Object: "o", Kind: "charge", Payload: "ada"}},
		Violations: []string{`seed 3: linearizability NS/o: the first operation no order explains is Pay("ada") (call 1, at 0s)`},
	}
}

// C10: the page leads with the violations a checker found, before the
// summary, and its time axis spans the background work (the alarm an hour
// after the call), drawn on its object's row.
func TestC10_TheViolationLeadsThePageAndTheAxisSpansTheBackground(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, render.HTML(&b, lateAlarmReport()))
	page := b.String()
	v := strings.Index(page, `<div class="violations">`)
	s := strings.Index(page, `<div class="summary">`)
	require.Positive(t, v, "the violations are on the page")
	assert.Less(t, v, s, "before the summary")
	assert.Contains(t, page, "<b>1 violation(s)</b> in this run:")
	assert.Contains(t, page, `the first operation no order explains is Pay(&#34;ada&#34;) (call 1, at 0s)`)
	assert.Contains(t, page, `<b class="fail">violations: 1</b>`)
	assert.Contains(t, page, ">"+render.Ms(time.Hour)+"</text>", "the axis reaches the alarm")
	assert.Contains(t, page, "<title>alarm retry=0 at "+render.Ms(time.Hour)+"</title>")
	assert.Contains(t, page, `<title>charge &#34;ada&#34; at `+render.Ms(time.Hour)+"</title>")
}
