package scenario

// Checking a finished run against its expectations: each is first checked
// without building any text, and described (what was expected, what
// happened) only when it is not met.

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
)

// Failure is an expectation that was not met.
type Failure struct {
	File string // the scenario's file
	Line int    // where the expectation is written
	// Path names the expectation: "calls[1].expect.executions".
	Path string
	// Call says which call, for a person ("INVENTORY/shop.AddOne"); empty
	// for expectations on the end state.
	Call string
	// Want is what was expected, Got what happened.
	Want, Got string
}

// Where locates the failure: FILE:LINE: path (call).
func (f Failure) Where() string {
	s := fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.Path)
	if f.Call != "" {
		s += " (" + f.Call + ")"
	}
	return s
}

// String renders the failure on one line: where, expected, got.
func (f Failure) String() string {
	return fmt.Sprintf("%s: expected %s, got %s", f.Where(), f.Want, f.Got)
}

// check evaluates every expectation of a finished run. Each is first
// checked without building any text; what was expected and what happened
// are described only for those not met, so that a passing run stays cheap.
func (r *Result) check() {
	s := r.Scenario
	for _, c := range s.calls {
		out := &r.Outcomes[c.Index]
		for i := range c.Expect {
			e := &c.Expect[i]
			r.Checked++
			if _, _, met := r.checkCall(e, out, false); met {
				continue
			}
			want, got, _ := r.checkCall(e, out, true)
			who := fmt.Sprintf("%s/%s.%s", c.Stub.Namespace.Name, c.Stub.Object, c.Method)
			r.Failures = append(r.Failures, Failure{File: s.File, Line: e.Line, Path: e.Path, Call: who, Want: want, Got: got})
		}
	}
	r.checkReceived()
	for i := range s.Expect {
		e := &s.Expect[i]
		r.Checked++
		if _, _, met := r.checkEnd(e, r.stepEffects(), false); met {
			continue
		}
		want, got, _ := r.checkEnd(e, r.stepEffects(), true)
		r.Failures = append(r.Failures, Failure{File: s.File, Line: e.Line, Path: e.Path, Want: want, Got: got})
	}
}

// CheckExplore evaluates the scenario's explore.expect expectations, the
// ones that must hold under any faults, and returns those not met. Their
// counts of effects take in the late work's too (the run option Horizon,
// rule C2): an email an alarm sends after the steps counts as one sent
// during them. Storage, SQL and resets are those of the end of the steps.
func (r *Result) CheckExplore() []Failure {
	s := r.Scenario
	var out []Failure
	for i := range s.Explore.Expect {
		e := &s.Explore.Expect[i]
		if _, _, met := r.checkEnd(e, r.Effects, false); met {
			continue
		}
		want, got, _ := r.checkEnd(e, r.Effects, true)
		out = append(out, Failure{File: s.File, Line: e.Line, Path: e.Path, Want: want, Got: got})
	}
	return out
}

func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}

// sameValue compares an expected value (already canonical) with a Go value.
func sameValue(want, got any) bool {
	switch g := got.(type) {
	case int:
		w, ok := want.(float64)
		return ok && w == float64(g)
	case string:
		w, ok := want.(string)
		return ok && w == g
	case bool:
		w, ok := want.(bool)
		return ok && w == g
	}
	return reflect.DeepEqual(want, canonical(got))
}

// checkCall checks one expectation of a call; with describe, it also says
// what was expected and what happened.
func (r *Result) checkCall(e *Expectation, out *CallResult, describe bool) (want, got string, met bool) {
	recs := out.Records
	sum := func(f func(*runtime.CallRecord) int) int {
		n := 0
		for _, idx := range recs {
			n += f(&r.Calls[idx])
		}
		return n
	}
	count := func(n int, unit string) (string, string, bool) {
		return checkCount(e, n, unit, "", describe)
	}
	errText := func() string { return "an error: " + out.Err.Error() }
	switch e.Kind {
	case ExpectOutcome:
		o := "(no call made)"
		if len(recs) > 0 {
			o = r.Calls[recs[len(recs)-1]].Outcome.String()
		}
		return e.Want.(string), o, o == e.Want.(string)
	case ExpectCalls:
		return count(len(recs), "call")
	case ExpectAttempts:
		return count(sum(func(c *runtime.CallRecord) int { return len(c.Attempts) }), "attempt")
	case ExpectExecutions:
		return count(sum(func(c *runtime.CallRecord) int { return c.Executions() }), "execution")
	case ExpectRejected:
		return count(sum(func(c *runtime.CallRecord) int { return c.Rejections() }), "rejection")
	case ExpectEffects:
		n := 0
		for _, ef := range r.stepEffects() {
			for _, idx := range recs {
				if ef.RequestID == r.Calls[idx].RequestID {
					n++
					break
				}
			}
		}
		return count(n, "effect")
	case ExpectDuration:
		if len(recs) == 0 {
			return render.Ms(e.Want.(time.Duration)), "(no call made)", false
		}
		d := r.Calls[recs[len(recs)-1]].End - r.Calls[recs[0]].Start
		return render.Ms(e.Want.(time.Duration)), render.Ms(d), d == e.Want.(time.Duration)
	case ExpectResult:
		met := out.Err == nil && sameValue(e.canon, out.Value)
		if !describe {
			return "", "", met
		}
		if out.Err != nil {
			return render.Value(e.Want), errText(), false
		}
		return render.Value(e.Want), render.Value(out.Value), met
	case ExpectStatus:
		if out.Err != nil {
			return fmt.Sprint(e.Want), errText(), false
		}
		return fmt.Sprint(e.Want), fmt.Sprint(out.Status), e.Want.(int) == out.Status
	case ExpectBody:
		if out.Err != nil {
			return fmt.Sprintf("%q", e.Want), errText(), false
		}
		return fmt.Sprintf("%q", e.Want), fmt.Sprintf("%q", out.Body), e.Want.(string) == out.Body
	case ExpectError:
		return checkError(e.Want.(ErrorExpectation), out.Err, describe)
	}
	return e.Kind, "an expectation dosim cannot check", false
}

// checkError compares a call's error with what was expected of it.
func checkError(want ErrorExpectation, err error, describe bool) (string, string, bool) {
	if want.None {
		if err == nil {
			return "no error", "no error", true
		}
		if !describe {
			return "", "", false
		}
		return "no error", "an error: " + err.Error(), false
	}
	flags := []struct {
		name string
		want *bool
		get  func(*stub.Error) bool
	}{
		{"retryable", want.Retryable, func(e *stub.Error) bool { return e.Retryable }},
		{"overloaded", want.Overloaded, func(e *stub.Error) bool { return e.Overloaded }},
		{"remote", want.Remote, func(e *stub.Error) bool { return e.Remote }},
	}
	var se *stub.Error
	isStub := err != nil && errors.As(err, &se)
	met := err != nil
	for _, f := range flags {
		if f.want != nil {
			met = met && (isStub && f.get(se)) == *f.want
		}
	}
	if met && want.Contains != "" && !strings.Contains(err.Error(), want.Contains) {
		met = false
	}
	if !describe {
		return "", "", met
	}
	var parts, gotParts []string
	for _, f := range flags {
		if f.want != nil {
			parts = append(parts, fmt.Sprintf("%s: %t", f.name, *f.want))
			gotParts = append(gotParts, fmt.Sprintf("%s: %t", f.name, isStub && f.get(se)))
		}
	}
	if want.Contains != "" {
		parts = append(parts, fmt.Sprintf("containing %q", want.Contains))
	}
	wantText := "an error"
	if len(parts) > 0 {
		wantText += " (" + strings.Join(parts, ", ") + ")"
	}
	if err == nil {
		return wantText, "no error", false
	}
	gotText := "an error"
	if len(gotParts) > 0 {
		gotText += " (" + strings.Join(gotParts, ", ") + ")"
	}
	return wantText, gotText + ": " + err.Error(), met
}

// checkEnd checks one expectation on the end state, counting effects
// among effects; with describe, it also says what was expected and what
// happened.
func (r *Result) checkEnd(e *Expectation, effects []runtime.Effect, describe bool) (want, got string, met bool) {
	switch e.Kind {
	case ExpectStorage:
		v, found := r.storageOf(e.Stub)[e.Key]
		met := found != e.Absent && (e.Absent || sameValue(e.canon, v))
		if !describe {
			return "", "", met
		}
		where := fmt.Sprintf("%s/%s %q", e.Stub.Namespace.Name, e.Stub.Object, e.Key)
		want = where + " absent"
		if !e.Absent {
			want = where + " = " + render.Value(e.Want)
		}
		got = where + " absent"
		if found {
			got = where + " = " + render.Value(v)
		}
		return want, got, met
	case ExpectSQL:
		a := r.sql[e]
		met := a.err == nil && sameValue(e.canon, a.rows)
		if !describe {
			return "", "", met
		}
		where := fmt.Sprintf("%s/%s SQL %s", e.Stub.Namespace.Name, e.Stub.Object, quoteSQL(e.Key))
		if len(e.Args) > 0 {
			where += " with " + render.Value(e.Args)
		}
		want = where + " = " + render.Value(e.Want)
		if a.err != nil {
			return want, where + " failed: " + a.err.Error(), false
		}
		return want, where + " = " + render.Value(a.rows), met
	case ExpectResets:
		n := r.Resets[[2]string{e.Stub.Namespace.Name, e.Stub.Object}]
		return checkCount(e, n, "time", e.Stub.Namespace.Name+"/"+e.Stub.Object+" reset ", describe)
	case ExpectEffectKind:
		n := 0
		for _, ef := range effects {
			if ef.Kind == e.Key {
				n++
			}
		}
		return checkCount(e, n, e.Key+" effect", "", describe)
	}
	return e.Kind, "an expectation dosim cannot check", false
}
