package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// report is a hand-made run: a lost reply refused as a duplicate, with an
// effect, and a retry cancelled at the deadline that still ran later.
func report() Report {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	return Report{
		Name: "lost <reply>", File: "x.yaml", Description: "line one\nline \"two\"", Seed: 7,
		Calls: []runtime.CallRecord{
			{RequestID: "r1", Namespace: "INV", Object: "shop", Method: "AddOne", Start: 0, End: ms(300), Subrequests: 1,
				Outcome: transport.OutcomeDuplicateRejected, Err: "reply lost [retryable]", Attempts: []runtime.AttemptRecord{
					{N: 1, Start: 0, End: 0, Fault: transport.LoseResponse, Delivered: true, Executed: true},
					{N: 2, Start: ms(300), End: ms(300), Delivered: true, Rejected: true},
				}},
			{RequestID: "r2", Namespace: "INV", Object: "b&b", Method: "Get", Start: ms(300), End: ms(1300), Subrequests: 1,
				Outcome: transport.OutcomeTimeout, Err: "not delivered", Attempts: []runtime.AttemptRecord{
					{N: 1, Start: ms(300), End: ms(300), Fault: transport.NotDelivered},
					{N: 2, Start: ms(500), End: ms(2500), Delivered: true, Executed: true, Cancelled: true},
				}},
		},
		Labels:       []string{`AddOne("<script>")`},
		Effects:      []runtime.Effect{{At: 0, Namespace: "INV", Object: "shop", Kind: "email", Payload: map[string]any{"to": "a"}, RequestID: "r1", Attempt: 1}},
		Storage:      []Object{{Namespace: "INV", Object: "shop", Data: map[string]any{"b": 2, "a": "x"}}, {Namespace: "INV", Object: "b&b"}},
		Expectations: 3,
		Failures:     []Failure{{Where: "x.yaml:9: calls[0].expect.executions", Want: "2 executions", Got: "1 execution"}},
	}
}

func TestText(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, Text(&b, report(), TextOptions{}))
	out := b.String()
	assert.Equal(t, `lost <reply> (seed 7)
x.yaml
line one
line "two"

#  START  END    OBJECT    CALL                TRY  LINK                  OBJECT DID             OUTCOME
1  0s     0s     INV/shop  AddOne("<script>")  1    lose-response         executed (1 email)
   300ms  300ms                                2    delivered             rejected as duplicate  duplicate-rejected
   error: reply lost [retryable]
2  300ms  300ms  INV/b&b   Get                 1    not-delivered         not reached
   500ms  2.5s                                 2    delivered, cancelled  executed               timeout
   error: not delivered

effects
  0s  INV/shop  email  {"to":"a"}  call 1, attempt 1

storage at the end
  INV/shop  a = "x"
            b = 2
  INV/b&b   (empty)

expectations: 1 of 3 NOT met
  x.yaml:9: calls[0].expect.executions
    expected: 2 executions
    got:      1 execution
`, out)
	assert.NotContains(t, out, "\x1b[")

	b.Reset()
	require.NoError(t, Text(&b, report(), TextOptions{Color: true}))
	assert.Contains(t, b.String(), ansiYellow+"duplicate-rejected"+ansiReset)
	assert.Contains(t, b.String(), ansiRed+"timeout"+ansiReset)
}

func TestJSONIsTheCallRecords(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, JSON(&b, report()))
	var one []JSONReport
	require.NoError(t, json.Unmarshal(b.Bytes(), &one), "one report is an array too")
	require.Len(t, one, 1)
	got := one[0]
	require.Len(t, got.Calls, 2)
	assert.Equal(t, `AddOne("<script>")`, got.Calls[0].Call)
	assert.Equal(t, "Get", got.Calls[1].Call, "a call without a label shows its method")
	assert.Equal(t, "lose-response", got.Calls[0].Attempts[0].Fault)
	assert.Equal(t, 2500.0, got.Calls[1].Attempts[1].EndMs)
	assert.True(t, got.Calls[1].Attempts[1].Cancelled)
	assert.Equal(t, map[string]any{}, got.Storage[1].Data)
	assert.Len(t, got.Failures, 1)

	b.Reset()
	require.NoError(t, JSON(&b, report(), Report{Name: "empty"}))
	var all []JSONReport
	require.NoError(t, json.Unmarshal(b.Bytes(), &all))
	assert.Len(t, all, 2)
	assert.Equal(t, []JSONCall{}, all[1].Calls)
	assert.Equal(t, []Failure{}, all[1].Failures)
}

func TestMermaid(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, Mermaid(&b, report()))
	out := b.String()
	assert.True(t, strings.HasPrefix(out, "sequenceDiagram\n    title lost ‹reply› (seed 7)\n"))
	assert.Contains(t, out, "participant O2 as INV/b&b")
	assert.Contains(t, out, "C->>O1: call 1 AddOne('‹script›'), try 1 at 0s\n    Note right of O1: effect email {'to':'a'}\n    Note right of O1: executed\n")
	assert.Contains(t, out, "O1--xC: reply lost (lose-response)")
	assert.Contains(t, out, "C-xO2: call 2 Get, try 1 at 300ms (not-delivered)")
	assert.Contains(t, out, "Note left of C: try 2 cancelled at 1.3s\n    Note over C: call 2 timeout\n")
	assert.Contains(t, out, "Note right of O2: executed at 2.5s, the caller gone")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		assert.NotContains(t, line, ";", "a semicolon ends a Mermaid statement")
	}
	assert.Equal(t, "a,b 'c'", mermaidText("a;b\n\"c\""))
}

func TestHTMLIsSelfContainedAndEscaped(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, HTML(&b, report(), Report{Name: "no calls"}))
	out := b.String()
	assert.True(t, strings.HasPrefix(out, "<!DOCTYPE html>"))
	assert.True(t, strings.HasSuffix(out, "</html>\n"))
	for _, bad := range []string{"<script", "http://", "https://", "<link", "@import", "url("} {
		assert.NotContains(t, out, bad)
	}
	assert.Contains(t, out, "lost &lt;reply&gt;")
	assert.Contains(t, out, "INV/b&amp;b")
	assert.Equal(t, 1, strings.Count(out, `role="img"`), "one timeline: the run without calls has none")
	assert.Contains(t, out, "1 of 3 NOT met")
	assert.Contains(t, out, ">cancelled</text>")
	assert.Contains(t, out, ">lose-response</text>")
	assert.Contains(t, out, ">wait 300ms</text>")
}

// Distinct times keep a minimum distance; the rest of the width is shared
// in proportion to time, so the scale is increasing.
func TestTimeScale(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	sc := newTimeScale([]time.Duration{ms(5000), 0, ms(1), ms(1), ms(2), ms(5000)}, 800)
	require.Len(t, sc.times, 4)
	for i := 1; i < len(sc.xs); i++ {
		assert.GreaterOrEqual(t, sc.xs[i]-sc.xs[i-1], 30.0)
	}
	assert.InDelta(t, 800, sc.xs[3], 0.001)
	assert.InDelta(t, sc.x(ms(2501)), (sc.xs[2]+sc.xs[3])/2, 0.001)
	one := newTimeScale([]time.Duration{ms(7)}, 800)
	assert.Equal(t, 24.0, one.x(ms(7)))
	var many []time.Duration
	for i := range 100 {
		many = append(many, ms(i))
	}
	wide := newTimeScale(many, 800)
	assert.Greater(t, wide.width, 800.0, "many events widen the timeline rather than overlap")
}

// Rule H2: text from a scenario reaches the terminal escaped, as call
// arguments are: a description or a storage key cannot clear the screen.
func TestH2_TextEscapesDescriptionAndStorageKeys(t *testing.T) {
	r := Report{
		Name:        "evil\x1b]0;title\x07",
		Description: "line one\x1b[2J\nline two \u202eeno",
		Storage:     []Object{{Namespace: "NS", Object: "o\x1b[1m", Data: map[string]any{"key\x1b[31m": "v\u009b1m"}}},
	}
	var b strings.Builder
	require.NoError(t, Text(&b, r, TextOptions{}))
	out := b.String()
	assert.NotContains(t, out, "\x1b")
	assert.NotContains(t, out, "\x07")
	assert.NotContains(t, out, "\u202e")
	assert.NotContains(t, out, "\u009b")
	assert.Contains(t, out, `evil\u001b]0;title\u0007 (seed 0)`)
	assert.Contains(t, out, "line one\\u001b[2J\nline two \\u202eeno\n")
	assert.Contains(t, out, `NS/o\u001b[1m  key\u001b[31m = "v\u009b1m"`)
}

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain \"text\" ok": "plain \"text\" ok",
		"tab\there":         `tab\there`,
		"nl\ncr\r":          `nl\ncr\r`,
		"\x1b[0m\x7f":       `\u001b[0m\u007f`,
		"\u2028\u2066x":     `\u2028\u2066x`,
		"bad\xffutf8":       "bad\ufffdutf8",
		"héllo, 世界 – ✓":     "héllo, 世界 – ✓",
	} {
		assert.Equal(t, want, Escape(in), "%q", in)
	}
	// Value is JSON through the same escape.
	assert.Equal(t, `["a\u001bb","c\u007f"]`, Value([]any{"a\x1bb", "c\x7f"}))
}

// An SQL table in a storage snapshot shows as a table with a line per row
// (rule Q2: SQL state is storage, and timelines show it readably).
func TestStorageShowsSQLTables(t *testing.T) {
	table := map[string]any{"type": "table", "columns": []any{"seat", "holder"}, "rows": []any{[]any{1, "alice"}}}
	assert.Equal(t, []string{"sql table seats (seat, holder): 1 row(s)", `  [1,"alice"]`},
		storageLines(object.SQLSnapshotPrefix+"seats", table))
	assert.Equal(t, []string{"apple = 3"}, storageLines("apple", 3))
}

// Mermaid draws calls that overlap in virtual time side by side (a par
// block, a branch per call, the alarms of that time in a branch of their
// own), each attempt's effects beside it, and the events outside calls
// (alarms, resets) at their time, times as Go durations.
func TestMermaidShowsConcurrencyEffectsAndAlarms(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	r := Report{Name: "two at once", Seed: 3,
		Calls: []runtime.CallRecord{
			{RequestID: "a", Namespace: "B", Object: "x", Method: "Hold", Start: 0, End: ms(20), Outcome: transport.OutcomeOK,
				Attempts: []runtime.AttemptRecord{{N: 1, RequestID: "a", Start: 0, End: ms(20), Delivered: true, Executed: true}}},
			{RequestID: "b", Namespace: "B", Object: "y", Method: "Hold", Start: ms(5), End: ms(10), Outcome: transport.OutcomeOK,
				Attempts: []runtime.AttemptRecord{{N: 1, RequestID: "b", Start: ms(5), End: ms(10), Delivered: true, Executed: true}}},
			{RequestID: "c", Namespace: "B", Object: "x", Method: "Pay", Start: ms(3601862), End: ms(3601862), Outcome: transport.OutcomeOK,
				Attempts: []runtime.AttemptRecord{{N: 1, RequestID: "c", Start: ms(3601862), End: ms(3601862), Delivered: true, Executed: true}}},
		},
		Effects: []runtime.Effect{{At: ms(7), Namespace: "B", Object: "y", Kind: "charge", Payload: "k", RequestID: "b", Attempt: 1},
			{At: ms(900), Namespace: "B", Object: "z", Kind: "email", Payload: "from the alarm"}},
		Events: []object.Event{{At: ms(8), Namespace: "B", Object: "z", Kind: object.EventAlarm},
			{At: ms(3600000), Namespace: "B", Object: "x", Kind: object.EventReset, Reason: "code-update"}},
	}
	var b bytes.Buffer
	require.NoError(t, Mermaid(&b, r))
	assert.Equal(t, `sequenceDiagram
    title two at once (seed 3)
    participant C as caller
    participant O1 as B/x
    participant O2 as B/y
    participant O3 as B/z
    par call 1 Hold
        C->>O1: call 1 Hold, try 1 at 0s
        Note right of O1: executed
        O1-->>C: reply at 20ms
        Note over C: call 1 ok
    and call 2 Hold
        C->>O2: call 2 Hold, try 1 at 5ms
        Note right of O2: effect charge 'k'
        Note right of O2: executed
        O2-->>C: reply at 10ms
        Note over C: call 2 ok
    and alarms, tasks and resets
        Note right of O3: alarm at 8ms: retry=0
    end
    Note right of O3: effect email 'from the alarm'
    Note right of O1: reset at 1h0m0s: reason=code-update message=''
    C->>O1: call 3 Pay, try 1 at 1h0m1.862s
    Note right of O1: executed
    O1-->>C: reply at 1h0m1.862s
    Note over C: call 3 ok
`, b.String())
}
