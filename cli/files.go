package cli

import (
	"io"
	"os"
	"path/filepath"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/internal/atomicfile"
	"github.com/dosim/dosim/render"
)

// The files a command writes (explore --json, --artifacts, explore merge
// --json) are checked before the work whose result they hold, and written
// whole or not at all (package atomicfile): a failed or killed run leaves
// what was there before.

// outputFile is a file a command writes, checked against what it must
// not overwrite.
type outputFile struct {
	flag, path string
	inputs     []string // files the command reads: never overwritten
	artifacts  string   // the --artifacts folder, or ""
}

// check says, before the work, why the output cannot be written: it is
// one of the inputs, an artifact's name in the artifacts' folder, a
// folder, or in a folder that does not take new files. "-" (standard
// output) is always fine. It changes nothing on disk.
func (o outputFile) check() error {
	if o.path == "-" {
		return nil
	}
	for _, in := range o.inputs {
		if sameFile(o.path, in) {
			return usageErrorf("%s %s: that is an input of this command (%s): writing it would replace it; name another file", o.flag, render.Escape(o.path), render.Escape(in))
		}
	}
	if o.artifacts != "" && inFolder(o.path, o.artifacts) && explore.ArtifactFile(filepath.Base(o.path)) {
		return usageErrorf("%s %s: the artifacts written to --artifacts %s may have that name: name another file, or another folder", o.flag, render.Escape(o.path), render.Escape(o.artifacts))
	}
	if err := atomicfile.Check(o.path); err != nil {
		return usageErrorf("%s %s: %w", o.flag, render.Escape(o.path), err)
	}
	return nil
}

// write writes the output through fn: to stdout for "-", else whole or
// not at all. A failed write is exit code 2, naming the flag.
func (o outputFile) write(stdout io.Writer, fn func(io.Writer) error) error {
	var err error
	if o.path == "-" {
		err = fn(stdout)
	} else {
		err = atomicfile.Write(o.path, 0o644, fn)
	}
	if err != nil {
		return writeErrorf("%s %s: %w", o.flag, render.Escape(o.path), err)
	}
	return nil
}

// sameFile reports whether a and b name one file: the same file on disk,
// or, for a file not there yet, the same cleaned absolute path.
func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	return errA == nil && errB == nil && absA == absB
}

// inFolder reports whether path's folder is dir.
func inFolder(path, dir string) bool { return sameFile(filepath.Dir(path), dir) }

// checkFolder makes sure dir is a folder dosim can write to, creating it
// if need be: --artifacts is checked before the sweep, not after it.
// inputs are files the command reads: none may be an artifact's name in
// dir, which writing the artifacts would replace.
func checkFolder(dir string, inputs ...string) error {
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return usageErrorf("--artifacts: %s is a file: want a folder (it is created if missing)", render.Escape(dir))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usageErrorf("--artifacts: cannot create the folder: %w", err)
	}
	for _, in := range inputs {
		if inFolder(in, dir) && explore.ArtifactFile(filepath.Base(in)) {
			return usageErrorf("--artifacts %s: the input %s has the name of an artifact written there, which would replace it: name another folder", render.Escape(dir), render.Escape(in))
		}
	}
	f, err := os.CreateTemp(dir, ".dosim-check-*")
	if err != nil {
		return usageErrorf("--artifacts: %s is not writable: %w", render.Escape(dir), err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// writeErrorf is output that could not be written: exit code 2, whatever
// the command found, since its report never reached the reader.
func writeErrorf(format string, args ...any) error { return usageErrorf(format, args...) }

// artifactsError is a failure to write the artifacts of a run with
// violations: output that could not be written (exit code 2), saying
// what was found all the same.
func artifactsError(dir string, err error, violations int) error {
	return writeErrorf("--artifacts %s: writing the failing seed's artifacts: %w (the run has %d violation(s), reported above)", render.Escape(dir), err, violations)
}
