package runtimetest

import (
	"bytes"
	"os"

	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
)

// writeTimeline writes the HTML timeline of rt's calls: the page dosim run
// --format html draws, one self-contained file.
func writeTimeline(path, name string, rt *runtime.Runtime) error {
	var b bytes.Buffer
	rep := render.Report{Name: name, Seed: rt.Seed(), Calls: rt.Calls(), Effects: rt.Effects()}
	if err := render.HTML(&b, rep); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
