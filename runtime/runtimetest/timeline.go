package runtimetest

import (
	"bytes"
	"html"
	"os"

	"github.com/dosim/dosim/runtime"
)

// writeTimeline writes the HTML timeline of rt's calls.
func writeTimeline(path string, rt *runtime.Runtime) error {
	var b bytes.Buffer
	b.WriteString("<!doctype html><meta charset=utf-8><title>dosim timeline</title><pre>")
	var table bytes.Buffer
	if err := runtime.WriteTable(&table, rt.Calls()); err != nil {
		return err
	}
	b.WriteString(html.EscapeString(table.String()))
	b.WriteString("</pre>")
	return os.WriteFile(path, b.Bytes(), 0o644)
}
