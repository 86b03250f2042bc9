package platformtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/dosim/dosim/stub"
)

// attempt is worker.js's attempt: a result as {"value": v} or, on an
// error, {"error": errObs(err)}.
func attempt(v any, err error) map[string]any {
	if err != nil {
		return map[string]any{"error": errObs(err)}
	}
	return map[string]any{"value": v}
}

// errObs is an error as worker.js's errObs writes a caller's view of one:
// the message, the flags, a code, and the JavaScript class where dosim has
// one (name; absent where it has none, and then not compared).
func errObs(err error) map[string]any {
	o := map[string]any{"message": err.Error(), "remote": false, "retryable": false, "overloaded": false, "durableObjectReset": false}
	var se *stub.Error
	if errors.As(err, &se) {
		o["remote"], o["retryable"], o["overloaded"], o["durableObjectReset"] = se.Remote, se.Retryable, se.Overloaded, se.DurableObjectReset
	}
	var ce *codeError
	if errors.As(err, &ce) {
		o["code"] = ce.Code
	}
	switch {
	case errors.Is(err, stub.ErrType):
		o["name"] = "TypeError"
	case errors.Is(err, stub.ErrRange):
		o["name"] = "RangeError"
	}
	return o
}

// normalize makes an observation plain JSON (numbers float64), as the
// platform's arrives.
func normalize(obs map[string]any) (map[string]any, error) {
	b, err := json.Marshal(obs)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}

// differences lists, per result, how dosim's observation differs from the
// platform's, sorted by result name.
func differences(platform, dosim map[string]any) map[string]string {
	diffs := map[string]string{}
	for _, k := range unionKeys(platform, dosim) {
		p, pok := platform[k]
		d, dok := dosim[k]
		switch {
		case !pok:
			diffs[k] = fmt.Sprintf("only dosim has it: %s", show(d))
		case !dok:
			diffs[k] = fmt.Sprintf("only the platform has it: %s", show(p))
		default:
			if why := differ(p, d); why != "" {
				diffs[k] = why
			}
		}
	}
	return diffs
}

// differ says how a dosim result d differs from the platform's p, or "".
func differ(p, d any) string {
	pe, pIsErr := errorOf(p)
	de, dIsErr := errorOf(d)
	if !pIsErr || !dIsErr {
		if reflect.DeepEqual(p, d) {
			return ""
		}
		return fmt.Sprintf("platform %s, dosim %s", show(p), show(d))
	}
	var why []string
	if pm, dm := fmt.Sprint(pe["message"]), fmt.Sprint(de["message"]); !strings.Contains(dm, pm) {
		why = append(why, fmt.Sprintf("message %q does not contain the platform's %q", dm, pm))
	}
	for _, f := range []string{"remote", "retryable", "overloaded", "durableObjectReset", "code"} {
		if !reflect.DeepEqual(pe[f], de[f]) {
			why = append(why, fmt.Sprintf("%s: platform %v, dosim %v", f, show(pe[f]), show(de[f])))
		}
	}
	if dn, ok := de["name"]; ok && dn != pe["name"] {
		why = append(why, fmt.Sprintf("name: platform %v, dosim %v", pe["name"], dn))
	}
	return strings.Join(why, "; ")
}

// errorOf returns a result's error, if it is one.
func errorOf(r any) (map[string]any, bool) {
	m, ok := r.(map[string]any)
	if !ok {
		return nil, false
	}
	e, ok := m["error"].(map[string]any)
	return e, ok
}

func unionKeys(a, b map[string]any) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// show is a value as compact JSON.
func show(v any) string {
	if v == nil {
		return "(none)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func itoa(i int) string { return strconv.Itoa(i) }
