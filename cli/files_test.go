package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copyFile copies src to dst and returns dst.
func copyFile(t *testing.T, src, dst string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(dst, data, 0o644))
	return dst
}

// Rule H2: explore --json never replaces the scenario it sweeps (--json
// mine.yaml did, exit 0), nor an artifact's name in the --artifacts
// folder (--json DIR/timeline.html was overwritten by the timeline), and
// the scenario is not an artifact's name either. Each is refused before
// the sweep, naming the flag and the file, and the file is left as it was.
func TestH2_ExploreRefusesAnOutputThatIsAnInputOrAnArtifact(t *testing.T) {
	dir := t.TempDir()
	mine := copyFile(t, "../testdata/scenarios/overloaded.yaml", filepath.Join(dir, "mine.yaml"))
	before, err := os.ReadFile(mine)
	require.NoError(t, err)
	arts := filepath.Join(dir, "out")
	inArts := copyFile(t, mine, filepath.Join(dir, "faults.yaml"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{mine, "--json", mine}, "--json " + mine + ": that is an input of this command (" + mine + ")"},
		{[]string{mine, "--json", filepath.Join(dir, ".", "mine.yaml")}, "that is an input of this command"},
		{[]string{mine, "--json", filepath.Join(arts, "timeline.html"), "--artifacts", arts}, "--json " + filepath.Join(arts, "timeline.html") + ": the artifacts written to --artifacts " + arts + " may have that name"},
		{[]string{mine, "--json", filepath.Join(arts, "linearizability-NS-x.html"), "--artifacts", arts}, "may have that name"},
		{[]string{inArts, "--artifacts", dir}, "--artifacts " + dir + ": the input " + inArts + " has the name of an artifact written there"},
	} {
		code, out, errOut := runCLI(t, append([]string{"explore", "--seeds", "3"}, tc.args...)...)
		assert.Equal(t, exitUsage, code, "%v: %s", tc.args, errOut)
		assert.Contains(t, errOut, tc.want, tc.args)
		assert.Empty(t, out, "refused before the sweep: %v", tc.args)
	}
	after, err := os.ReadFile(mine)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
	_, err = os.Stat(filepath.Join(arts, "timeline.html"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	// Another name in the folder is fine.
	code, _, errOut := runCLI(t, "explore", mine, "--seeds", "3", "--json", filepath.Join(arts, "summary.json"), "--artifacts", arts)
	require.Equal(t, exitOK, code, errOut)
	assert.FileExists(t, filepath.Join(arts, "summary.json"))
}

// Rule H2: while a sweep runs, a previous --json file is whole: a re-run
// of a shard killed half way (SIGKILL, a CI timeout) left the previous
// complete shard at 0 bytes, since --json was truncated before the sweep.
// The new summary replaces it at the end, and no temporary file is left.
// The check reads the file at the first progress line, as a kill would
// find it; the progress clock is faked, so nothing here is timed.
func TestH2_ExploreJSONKeepsThePreviousFileUntilTheEnd(t *testing.T) {
	dir := t.TempDir()
	shard := filepath.Join(dir, "shard-0.json")
	code, _, errOut := runCLI(t, "explore", ambiguous, "--seeds", "20", "--json", shard)
	require.Equal(t, exitOK, code, errOut)
	complete, err := os.ReadFile(shard)
	require.NoError(t, err)
	require.Contains(t, string(complete), `"complete": true`)

	defer func(c func() time.Time) { wallClock = c }(wallClock)
	wallClock = fakeClock(11 * time.Second) // a progress line per seed
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var during []byte
	stderr := &syncBuffer{hook: func(s string) {
		if during == nil && strings.Contains(s, "seeds (0%)") {
			during, _ = os.ReadFile(shard)
			cancel()
		}
	}}
	code = runContext(ctx, []string{"explore", ambiguous, "--seeds", "9000000000000000000", "--json", shard}, &bytes.Buffer{}, stderr)
	assert.Equal(t, exitInterrupted, code, stderr.String())
	assert.Equal(t, string(complete), string(during), "the previous shard, whole, while the sweep ran")
	now, err := os.ReadFile(shard)
	require.NoError(t, err)
	assert.Contains(t, string(now), `"complete": false`, "replaced at the end by the new summary")
	left, err := filepath.Glob(filepath.Join(dir, ".dosim-*"))
	require.NoError(t, err)
	assert.Empty(t, left)
}

// Rule H2: explore merge --json does not replace one of the summaries it
// merges.
func TestH2_MergeRefusesToWriteOverAnInput(t *testing.T) {
	dir := t.TempDir()
	a := shardFile(t, dir, ambiguous, "0/2")
	b := shardFile(t, dir, ambiguous, "1/2")
	before, err := os.ReadFile(b)
	require.NoError(t, err)
	code, out, errOut := runCLI(t, "explore", "merge", a, b, "--json", b)
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, "--json "+b+": that is an input of this command")
	assert.Empty(t, out)
	after, err := os.ReadFile(b)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))

	merged := filepath.Join(dir, "merged.json")
	code, _, errOut = runCLI(t, "explore", "merge", a, b, "--json", merged)
	require.Equal(t, exitOK, code, errOut)
	assert.FileExists(t, merged)
}

// Rule H2: --artifacts writes under a safe name the history of an object
// whose name is 300 bytes long or holds a NUL (both exited 3, "a bug",
// hiding the violation's exit 1).
func TestH2_ArtifactsOfObjectsWithOddNames(t *testing.T) {
	src, err := os.ReadFile("../testdata/scenarios/booth-leaky.yaml")
	require.NoError(t, err)
	for name, object := range map[string]string{"long": strings.Repeat("s", 300), "nul": `"show\0/../x"`} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			f := filepath.Join(dir, "booth.yaml")
			require.NoError(t, os.WriteFile(f, bytes.Replace(src, []byte("object: show-42"), []byte("object: "+object), 1), 0o644))
			arts := filepath.Join(dir, "out")
			code, out, errOut := runCLI(t, "explore", f, "--replay", "8", "--artifacts", arts)
			assert.Equal(t, exitExpect, code, errOut)
			assert.Contains(t, out, "linearizability BOOTH/")
			pages, err := filepath.Glob(filepath.Join(arts, "linearizability-BOOTH-*.html"))
			require.NoError(t, err)
			assert.Len(t, pages, 1)
			assert.FileExists(t, filepath.Join(arts, "timeline.html"))
		})
	}
}
