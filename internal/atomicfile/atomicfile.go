// Package atomicfile writes an output file so that a reader sees either
// its old content or its whole new content, never a truncated file: the
// bytes go to a temporary file in the same folder, which is renamed over
// the path only once every byte is written, synced and closed. A write
// that fails, or a process killed on the way, leaves the path as it was.
//
// dosim explore --json, explore merge --json and explore's artifacts write
// through it: a summary of an hour's sweep is not lost to a re-run killed
// after a minute.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// tempPrefix starts the name of every temporary file Write makes, so that
// one a killed process left behind is easy to recognise (and to ignore).
const tempPrefix = ".dosim-tmp-"

// ErrNotAFile is the error of Check and Write for a path that names a
// folder.
var ErrNotAFile = errors.New("is a folder: want a file name")

// Check says whether Write could write path, before the work whose result
// it will hold: the path is not a folder and its folder exists and takes
// new files (a temporary file is created there and removed). It changes
// nothing at path.
func Check(path string) error {
	target, special, err := resolve(path)
	if err != nil || special {
		return err
	}
	dir := filepath.Dir(target)
	f, err := os.CreateTemp(dir, tempPrefix+"check-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // its path is the temporary file's
		}
		return fmt.Errorf("cannot create a file in folder %s: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// Write creates or replaces path with what write writes. The bytes go to
// a temporary file beside it, renamed over path once write, Sync and Close
// succeeded; on an error the temporary file is removed and path is left
// as it was. A new file gets perm; a replaced one keeps its mode. A path
// that exists and is not a regular file (a device such as /dev/stdout, a
// named pipe) is written in place, since it cannot be replaced; a symbolic
// link is followed and its target replaced.
func Write(path string, perm os.FileMode, write func(io.Writer) error) error {
	target, special, err := resolve(path)
	if err != nil {
		return err
	}
	if special {
		return writeInPlace(target, write)
	}
	if st, err := os.Stat(target); err == nil {
		perm = st.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(target), tempPrefix+filepath.Base(target)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, perm)
	}
	if err == nil {
		err = os.Rename(tmp, target)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// writeInPlace writes to a path that is not a regular file.
func writeInPlace(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// resolve follows symbolic links from path to the file Write replaces,
// and reports whether it exists and is not a regular file (special). A
// folder, or a path ending in a separator, is an error wrapping
// ErrNotAFile.
func resolve(path string) (target string, special bool, err error) {
	if path == "" || strings.HasSuffix(path, string(filepath.Separator)) || strings.HasSuffix(path, "/") {
		return "", false, ErrNotAFile
	}
	target = path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		target = real
	}
	st, err := os.Stat(target)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return target, false, nil
	case err != nil:
		return "", false, err
	case st.IsDir():
		return "", false, ErrNotAFile
	}
	return target, !st.Mode().IsRegular(), nil
}
