package scenario_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
)

// echo is a user's class with methods of every kind of parameter a YAML
// file can fill: it stores and returns what it is given.
type echo struct{ st *object.State }

type echoRecord struct {
	Name  string
	Tags  []string
	Score map[string]float64
	At    time.Time
	Next  *echoRecord
}

func (e *echo) Methods() object.Methods {
	return object.Methods{
		"Echo": object.Retryable(func(ctx context.Context, v any) (any, error) {
			return v, e.st.Storage().Put(ctx, "last", v)
		}),
		"Record": object.Func(func(ctx context.Context, r echoRecord) (echoRecord, error) {
			return r, e.st.Storage().Put(ctx, "record", r)
		}),
		"Many": object.Func(func(ctx context.Context, n int, s string, b bool, f float64, l []int, m map[string]string) (map[string]any, error) {
			return map[string]any{"n": n, "s": s, "b": b, "f": f, "l": l, "m": m}, nil
		}),
	}
}

// FuzzLoadWithAUserClassAndRender: a file that names a user's class loads
// or is refused without a panic, and what loads runs and renders in every
// format (text, JSON, HTML, Mermaid) without a panic, the same twice.
func FuzzLoadWithAUserClassAndRender(f *testing.F) {
	const head = "namespaces: {ECHO: echo, INVENTORY: inventory}\nstubs: {e: {namespace: ECHO, object: x}, shop: {namespace: INVENTORY}}\n"
	for _, s := range []string{
		head + "calls: [{stub: e, method: Echo, args: [{a: [1, 2, {b: c}]}]}]\n",
		head + "calls: [{stub: e, method: Record, args: [{Name: n, Tags: [x], Score: {a: 1.5}, At: 2025-01-01T00:00:00Z, Next: {Name: m}}]}]\n",
		head + "calls: [{stub: e, method: Many, args: [1, s, true, 2.5, [1, 2], {k: v}]}, {stub: shop, method: AddOne, args: [apple]}]\n",
		head + "faults: {random: {lose-response: 0.5}}\ncalls: [{stub: e, method: Echo, args: [\"\\u001b[2J\"]}]\n",
	} {
		f.Add([]byte(s))
	}
	classes := scenario.WithClasses(map[string]runtime.Constructor{"echo": func(st *object.State) object.Object { return &echo{st: st} }})
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := scenario.Parse("fuzz.yaml", data, scenario.WithBuiltInClasses(examples.Constructors()), classes)
		if err != nil || len(sc.Calls()) > 20 {
			return
		}
		a, b := renderAll(t, sc), renderAll(t, sc)
		if a != b {
			t.Fatalf("one seed, two renderings")
		}
	})
}

// renderAll runs sc and renders its report in every format.
func renderAll(t *testing.T, sc *scenario.Scenario) string {
	res, err := sc.Run()
	if err != nil {
		t.Fatalf("a valid scenario failed to run: %v", err)
	}
	r := res.Report()
	var out bytes.Buffer
	for _, w := range []struct {
		name  string
		write func() error
	}{
		{"text", func() error { return render.Text(&out, r, render.TextOptions{}) }},
		{"json", func() error { return render.JSON(&out, r) }},
		{"html", func() error { return render.HTML(&out, r) }},
		{"mermaid", func() error { return render.Mermaid(&out, r) }},
	} {
		if err := w.write(); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
	}
	return out.String()
}
