package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostile names: a right-to-left override, a left-to-right isolate and a
// Mermaid directive, in an object's name, a method's, a label and a
// stored key.
const (
	rlo       = "\u202e"
	lri       = "\u2066"
	directive = "%%{init: {'theme':'dark'}}%%"
)

func hostileReport() Report {
	r := report()
	r.Name = "run " + rlo + "gnp.exe"
	r.Calls[0].Object = "shop" + rlo + "evil" + directive
	r.Calls[0].Method = "Add" + lri + "One"
	r.Labels[0] = "AddOne(" + rlo + ")"
	r.Storage[0].Object = r.Calls[0].Object
	r.Storage[0].Data = map[string]any{"k" + rlo: lri + "v"}
	r.Effects[0].Object = r.Calls[0].Object
	return r
}

// Issue 36: a name can display as other text where a bidirectional
// override or isolate reaches a viewer as itself, and a Mermaid directive
// in a name reconfigures the diagram. Every format writes them inert: the
// text and Mermaid as \u202e, HTML the same, the JSON formats as the
// escape that decodes to the same string.
func TestHostileNamesAreInertInEveryFormat(t *testing.T) {
	r := hostileReport()
	outs := map[string]*bytes.Buffer{}
	for name, write := range map[string]func(*bytes.Buffer) error{
		"text":         func(b *bytes.Buffer) error { return Text(b, r, TextOptions{}) },
		"html":         func(b *bytes.Buffer) error { return HTML(b, r) },
		"json":         func(b *bytes.Buffer) error { return JSON(b, r) },
		"chrome-trace": func(b *bytes.Buffer) error { return ChromeTrace(b, r) },
		"mermaid":      func(b *bytes.Buffer) error { return Mermaid(b, r) },
	} {
		outs[name] = &bytes.Buffer{}
		require.NoError(t, write(outs[name]), name)
	}
	for name, b := range outs {
		out := b.String()
		assert.NotContains(t, out, rlo, "%s writes U+202E as itself", name)
		assert.NotContains(t, out, lri, "%s writes U+2066 as itself", name)
		assert.Contains(t, out, `\u202e`, "%s shows where the override was", name)
	}
	assert.NotContains(t, outs["mermaid"].String(), "%%{", "a directive came through a name")
	// The JSON formats still decode to the names as they were.
	var js []JSONReport
	require.NoError(t, json.Unmarshal(outs["json"].Bytes(), &js))
	assert.Equal(t, r.Calls[0].Object, js[0].Calls[0].Object)
	var trace struct{ TraceEvents []ChromeEvent }
	require.NoError(t, json.Unmarshal(outs["chrome-trace"].Bytes(), &trace))
	found := false
	for _, e := range trace.TraceEvents {
		found = found || strings.Contains(e.Name, rlo) || strings.Contains(e.Name, lri)
	}
	assert.True(t, found, "the trace's names decode to what they were")
}
