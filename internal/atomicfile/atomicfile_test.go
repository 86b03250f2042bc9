package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errHalfway = errors.New("disk full halfway")

// leftovers lists the temporary files left in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, tempPrefix+"*"))
	require.NoError(t, err)
	return m
}

// Rule H2: a write that fails halfway leaves the old file whole, and no
// temporary file behind; one that succeeds replaces it, keeping its mode.
func TestH2_WriteReplacesOnlyWhenWhole(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "shard.json")
	require.NoError(t, os.WriteFile(p, []byte("old, complete"), 0o600))

	err := Write(p, 0o644, func(w io.Writer) error {
		_, _ = io.WriteString(w, "new, cut")
		return errHalfway
	})
	require.ErrorIs(t, err, errHalfway)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "old, complete", string(got))
	assert.Empty(t, leftovers(t, dir))

	require.NoError(t, Write(p, 0o644, func(w io.Writer) error {
		_, err := io.WriteString(w, "new, whole")
		return err
	}))
	got, err = os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "new, whole", string(got))
	st, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "a replaced file keeps its mode")

	fresh := filepath.Join(dir, "fresh.json")
	require.NoError(t, Write(fresh, 0o644, func(io.Writer) error { return nil }))
	st, err = os.Stat(fresh)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())
	assert.Empty(t, leftovers(t, dir))
}

// Rule H2: Check changes nothing, and refuses a folder or a missing
// folder before any work is done.
func TestH2_CheckChangesNothing(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "keep.json")
	require.NoError(t, os.WriteFile(p, []byte("keep"), 0o644))
	require.NoError(t, Check(p))
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(got))
	require.NoError(t, Check(filepath.Join(dir, "new.json")))
	_, err = os.Stat(filepath.Join(dir, "new.json"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Empty(t, leftovers(t, dir))

	assert.ErrorIs(t, Check(dir), ErrNotAFile)
	assert.ErrorIs(t, Check(dir+"/"), ErrNotAFile)
	assert.ErrorIs(t, Write(dir, 0o644, func(io.Writer) error { return nil }), ErrNotAFile)
	assert.ErrorIs(t, Check(filepath.Join(dir, "no", "such", "x.json")), os.ErrNotExist)
}

// A device cannot be replaced: it is written in place (--json
// /dev/stdout), and its errors come back.
func TestH2_WriteToADeviceInPlace(t *testing.T) {
	require.NoError(t, Check(os.DevNull))
	require.NoError(t, Write(os.DevNull, 0o644, func(w io.Writer) error {
		_, err := io.WriteString(w, "gone")
		return err
	}))
	st, err := os.Stat(os.DevNull)
	require.NoError(t, err)
	assert.False(t, st.Mode().IsRegular(), "still a device")
	assert.ErrorIs(t, Write(os.DevNull, 0o644, func(io.Writer) error { return errHalfway }), errHalfway)
}

// A symbolic link is followed: its target is replaced, the link stays.
func TestH2_WriteFollowsALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	link := filepath.Join(dir, "link.json")
	require.NoError(t, os.WriteFile(target, []byte("old"), 0o644))
	require.NoError(t, os.Symlink(target, link))
	require.NoError(t, Write(link, 0o644, func(w io.Writer) error {
		_, err := io.WriteString(w, "new")
		return err
	}))
	got, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "new", string(got))
	st, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, st.Mode()&os.ModeSymlink)
}
