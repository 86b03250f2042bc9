package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outside builds values beyond what encoding/json and fmt survive: a map
// that holds itself, a list nested a million deep, a struct that points
// back at itself, and a list that shares its parts 2^60 times over.
func outside() map[string]any {
	self := map[string]any{"n": 1}
	self["self"] = self
	var deep any = "bottom"
	for range 1_000_000 {
		deep = []any{deep}
	}
	type node struct {
		Name string
		Next *node
	}
	loop := &node{Name: "a"}
	loop.Next = &node{Name: "b", Next: loop}
	var wide any = "leaf"
	for range 60 {
		wide = []any{wide, wide}
	}
	return map[string]any{"self": self, "deep": deep, "loop": loop, "wide": wide}
}

// H2: Value never dies of a value: a cycle, a million-deep nesting or a
// value whose parts are shared 2^60 times renders within bounds, the same
// text each time, and a value within them renders as encoding/json does.
func TestH2_ValueRendersWhatJSONCannot(t *testing.T) {
	vs := outside()
	assert.Equal(t, `{"n":1,"self":"<cycle>"}`, Value(vs["self"]))
	assert.Equal(t, `{"Name":"a","Next":{"Name":"b","Next":"<cycle>"}}`, Value(vs["loop"]))
	deep := Value(vs["deep"])
	assert.True(t, strings.HasPrefix(deep, strings.Repeat("[", 50)), deep[:60])
	assert.Contains(t, deep, "[...]")
	assert.Less(t, len(deep), 300)
	wide := Value(vs["wide"])
	assert.LessOrEqual(t, len(wide), maxValueText+len("...(cut)"))
	assert.True(t, strings.HasSuffix(wide, "...(cut)"))
	whole := Value(vs)
	assert.Equal(t, whole, Value(vs), "the same value gives the same text (D1)")
	assert.True(t, strings.HasPrefix(whole, `{"deep":[[[`), whole[:20])

	assert.Equal(t, `{"a":[1,"x"],"b":null}`, Value(map[string]any{"a": []any{1, "x"}, "b": nil}))
	nested := any("x")
	for range maxValueDepth - 1 {
		nested = []any{nested}
	}
	b, err := json.Marshal(nested)
	require.NoError(t, err)
	assert.Equal(t, string(b), Value(nested), "within the bounds, Value is JSON")
}

// H2: every renderer survives a report whose calls, effects and storage
// hold such values; the JSON written is valid JSON.
func TestH2_EveryRendererSurvivesValuesOutsideTheBounds(t *testing.T) {
	vs := outside()
	r := report()
	r.Labels = nil
	r.Calls[0].Args = []any{vs["self"], vs["deep"]}
	r.Calls[1].Result = vs["loop"]
	r.Calls[1].Err = ""
	r.Effects[0].Payload = vs["wide"]
	r.Storage[0].Data["self"] = vs["self"]
	r.Storage[0].Data["deep"] = vs["deep"]
	var buf bytes.Buffer
	require.NoError(t, Text(&buf, r, TextOptions{}))
	assert.Contains(t, buf.String(), `"<cycle>"`)
	buf.Reset()
	require.NoError(t, JSON(&buf, r))
	assert.True(t, json.Valid(buf.Bytes()))
	assert.Contains(t, buf.String(), `<cycle>`)
	buf.Reset()
	require.NoError(t, HTML(&buf, r))
	assert.Contains(t, buf.String(), `&lt;cycle&gt;`)
	buf.Reset()
	require.NoError(t, Mermaid(&buf, r))
	assert.Contains(t, buf.String(), `cycle`)
}
