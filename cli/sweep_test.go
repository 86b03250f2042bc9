package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shardFile runs one shard of a 100-seed sweep of file and returns its
// --json file.
func shardFile(t *testing.T, dir, file, shard string) string {
	t.Helper()
	out := filepath.Join(dir, "shard-"+strings.ReplaceAll(shard, "/", "-")+".json")
	code, _, errOut := runCLI(t, "explore", file, "--seeds", "100", "--shard", shard, "--json", out)
	require.Equal(t, exitOK, code, errOut)
	return out
}

// rewrite edits a JSON file in place.
func rewrite(t *testing.T, path string, change func(m map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	change(m)
	data, err = json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// H2: explore merge says "clean" only for shards it has checked: files
// that are empty, inconsistent, of another scenario file, duplicated or
// missing are refused with exit 2, naming the file, the field and what is
// allowed. Before, {} merged to "clean" with exit 0.
func TestH2_ExploreMergeRefusesWhatItCannotCheck(t *testing.T) {
	dir := t.TempDir()
	a := shardFile(t, dir, ambiguous, "0/2")
	b := shardFile(t, dir, ambiguous, "1/2")
	code, out, errOut := runCLI(t, "explore", "merge", a, b)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "clean: no violation")

	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
		return p
	}
	empty := write("empty.json", `{}`)
	copyOf := func(name string, change func(m map[string]any)) string {
		data, err := os.ReadFile(b)
		require.NoError(t, err)
		p := write(name, string(data))
		rewrite(t, p, change)
		return p
	}
	// Another file with the same name: the scenario edited by a comment.
	src, err := os.ReadFile(ambiguous)
	require.NoError(t, err)
	otherDir := filepath.Join(dir, "other")
	require.NoError(t, os.Mkdir(otherDir, 0o755))
	other := filepath.Join(otherDir, "ambiguous-delivery.yaml")
	require.NoError(t, os.WriteFile(other, append(src, "# edited\n"...), 0o644))
	otherShard := shardFile(t, otherDir, other, "1/2")

	tests := []struct {
		name  string
		files []string
		want  string
	}{
		{"empty object", []string{empty}, empty + `: "scenario" is "": want the scenario's name`},
		{"failed without violations", []string{a, copyOf("failed.json", func(m map[string]any) { m["failed"] = 3 })}, `failed.json: "total" is 0: each of the 3 failed seeds has a violation`},
		{"claims every shard", []string{copyOf("all.json", func(m map[string]any) {
			m["shards"] = []any{map[string]any{"index": 0, "count": 2}, map[string]any{"index": 1, "count": 2}}
		})}, `all.json: "ran" is 50: a complete summary of these shards ran all their 100 seeds`},
		{"count 0", []string{copyOf("c0.json", func(m map[string]any) { m["shards"] = []any{map[string]any{"index": 0, "count": 0}} })}, `c0.json: "shards" is 0/0: a shard's count is 0: want 1 or more`},
		{"count -2", []string{copyOf("cm2.json", func(m map[string]any) { m["shards"] = []any{map[string]any{"index": 0, "count": -2}} })}, `a shard's count is -2: want 1 or more`},
		{"index beyond count", []string{copyOf("i9.json", func(m map[string]any) { m["shards"] = []any{map[string]any{"index": 9, "count": 2}} })}, `a shard's index is 9: want 0 to 1`},
		{"ran -5", []string{copyOf("ran.json", func(m map[string]any) { m["ran"] = -5 })}, `ran.json: "ran" is -5: the shards hold 50 seeds: want 0 to 50`},
		{"ran below the shard's seeds", []string{copyOf("few.json", func(m map[string]any) { m["ran"] = 3 })}, `"ran" is 3: a complete summary of these shards ran all their 50 seeds`},
		{"another scenario file", []string{a, otherShard}, "are not shards of one sweep: the scenario file's digest (its bytes differ)"},
		{"a shard twice", []string{a, b, a}, "shard 0/2 appears twice, in " + a + " and in " + a},
		{"old summary without fingerprint", []string{copyOf("old.json", func(m map[string]any) { delete(m, "fingerprint") })}, `"fingerprint" is "": a summary records its scenario's fingerprint`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"explore", "merge"}, tc.files...)...)
			assert.Equal(t, exitUsage, code, errOut)
			assert.Contains(t, errOut, tc.want)
			assert.NotContains(t, out, "clean")
		})
	}
}

// H2: a split into many shards with most missing (Missing listed every
// one) names the missing ones as ranges.
func TestH2_ExploreMergeNamesMissingShardsAsRanges(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "s.json")
	code, _, errOut := runCLI(t, "explore", ambiguous, "--seeds", "10", "--shard", "3/100000", "--json", f)
	require.Equal(t, exitOK, code, errOut)
	code, out, errOut := runCLI(t, "explore", "merge", f)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, out, "missing shards (99999): 0-2/100000, 4-99999/100000\n")
	assert.Contains(t, errOut, "99999 of 100000 shards missing (0-2/100000, 4-99999/100000): the sweep is incomplete (--allow-incomplete accepts it)")
}

// H2: --seeds 0 and --workers 0 are refused (they silently became 1000
// and 1); --first 0 is seed 0; a last seed beyond a uint64 is refused.
func TestH2_ExploreSeedFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--seeds", "0"}, "--seeds 0: want 1 or more seeds"},
		{[]string{"--workers", "0"}, "--workers 0: want 1 to 256 seeds checked in parallel"},
		{[]string{"--workers", "257"}, "--workers 257: want 1 to 256"},
		{[]string{"--first", "18446744073709551615", "--seeds", "2"}, "--first 18446744073709551615 with --seeds 2: the last seed, first+seeds-1, must be at most"},
		{[]string{"--seeds", "99999999999999999999"}, `invalid argument "99999999999999999999" for "--seeds"`},
	} {
		code, out, errOut := runCLI(t, append([]string{"explore", ambiguous}, tc.args...)...)
		assert.Equal(t, exitUsage, code, "%v: %s", tc.args, errOut)
		assert.Contains(t, errOut, tc.want, "%v", tc.args)
		assert.Empty(t, out, "%v: refused before any seed ran", tc.args)
	}
	code, out, errOut := runCLI(t, "explore", ambiguous, "--first", "0", "--seeds", "3")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "seeds 0..2, rates")
	assert.Contains(t, out, "3 seeds run")
	code, out, errOut = runCLI(t, "explore", ambiguous, "--first", "18446744073709551615", "--seeds", "1")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "seeds 18446744073709551615..18446744073709551615, rates")
}

// H2: --artifacts naming a file exited 3 ("a bug in dosim") after the
// whole sweep; it is now a usage error before any seed runs. --json is
// checked first too.
func TestH2_ExploreChecksOutputPathsBeforeSweeping(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	mailer := "../testdata/scenarios/mailer-vs-ledger.yaml"
	code, out, errOut := runCLI(t, "explore", mailer, "--seeds", "200", "--artifacts", file)
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, "--artifacts: "+file+" is a file: want a folder")
	assert.Empty(t, out, "refused before the sweep")

	code, out, errOut = runCLI(t, "explore", mailer, "--seeds", "200", "--json", filepath.Join(file, "x.json"))
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, "--json "+filepath.Join(file, "x.json")+": ")
	assert.Empty(t, out)

	nested := filepath.Join(dir, "a", "b")
	code, _, errOut = runCLI(t, "explore", mailer, "--seeds", "200", "--artifacts", nested)
	assert.Equal(t, exitExpect, code, errOut)
	assert.FileExists(t, filepath.Join(nested, "faults.yaml"))
}

// syncBuffer is a buffer that calls hook, under its lock, after each write.
type syncBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	hook func(string)
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	if b.hook != nil {
		b.hook(b.buf.String())
	}
	return n, err
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// fakeClock steps by step on every reading.
func fakeClock(step time.Duration) func() time.Time {
	var mu sync.Mutex
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(step)
		return now
	}
}

// H2: an interrupted explore (exit 130 and nothing printed, before)
// prints the summary of the seeds that ran marked INTERRUPTED and writes
// --json with "complete": false, which merge refuses unless
// --allow-incomplete, and then never calls clean. 9*10^18 seeds (a
// makeslice panic, before) start at once. The test cancels the context as
// a signal would, once the first progress line is out; the progress clock
// is faked, so nothing here is timed.
func TestH2_ExploreInterruptedSummarisesWhatRan(t *testing.T) {
	defer func(c func() time.Time) { wallClock = c }(wallClock)
	wallClock = fakeClock(11 * time.Second) // a progress line per seed
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout bytes.Buffer
	stderr := &syncBuffer{hook: func(s string) {
		if strings.Contains(s, "seeds (0%)") {
			cancel()
		}
	}}
	js := filepath.Join(t.TempDir(), "cut.json")
	code := runContext(ctx, []string{"explore", ambiguous, "--seeds", "9000000000000000000", "--workers", "2", "--json", js}, &stdout, stderr)
	assert.Equal(t, exitInterrupted, code, stderr.String())
	out := stdout.String()
	assert.Contains(t, out, "seeds 1..9000000000000000000, rates")
	assert.Contains(t, out, "INTERRUPTED: only the first ")
	assert.Contains(t, out, "incomplete: no violation in the ")
	assert.NotContains(t, out, "clean: no violation")
	assert.Contains(t, stderr.String(), "explore: 9000000000000000000 seeds to run; progress every 10s\n")
	assert.Contains(t, stderr.String(), "dosim: interrupted: ")
	data, err := os.ReadFile(js)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"complete": false`)

	code, _, errOut := runCLI(t, "explore", "merge", js)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "interrupted shards: "+js+" ran ")
	assert.Contains(t, errOut, "(--allow-incomplete accepts it)")
	code, out, errOut = runCLI(t, "explore", "merge", "--allow-incomplete", js)
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "INCOMPLETE: some shards were interrupted")
	assert.NotContains(t, out, "clean: no violation")
}

// The exit code of an interrupted run says which signal ended it.
func TestInterruptCode(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(signalled{syscall.SIGTERM})
	assert.Equal(t, 143, interruptCode(ctx))
	ctx, cancel = context.WithCancelCause(context.Background())
	cancel(nil)
	assert.Equal(t, exitInterrupted, interruptCode(ctx))
}

// H2: off a terminal, progress is a plain line at a steady interval
// (seeds done, rate, violations so far) instead of nothing until the end.
// The clock is the test's: each reading is 4 s later.
func TestH2_ProgressLinesOffATerminal(t *testing.T) {
	var b bytes.Buffer
	p := &progress{w: &b, name: "explore", unit: "seeds", total: 1000, now: fakeClock(4 * time.Second), every: 10 * time.Second}
	p.begin()
	for done := 1; done <= 8; done++ {
		p.update(done*100, done/4)
	}
	p.done()
	assert.Equal(t, "explore: 1000 seeds to run; progress every 10s\n"+
		"explore: 300/1000 seeds (30%), 25 seeds/s, 0 violation(s) so far\n"+
		"explore: 600/1000 seeds (60%), 25 seeds/s, 1 violation(s) so far\n", b.String())

	b.Reset()
	p = &progress{w: &b, name: "amplify", unit: "trials", total: 10, tty: true, now: fakeClock(time.Second), every: time.Second}
	p.begin()
	p.update(5, -1)
	p.update(5, -1)
	p.done()
	assert.Equal(t, "\r  [###############               ]  50%  5/10 trials\r"+strings.Repeat(" ", 72)+"\r", b.String(), "the bar is drawn once per percent")

	// explore from 2,000 seeds says it started, at once.
	code, _, errOut := runCLI(t, "explore", ambiguous, "--seeds", "2000")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "explore: 2000 seeds to run; progress every 10s\n", errOut)
}

// buildDosim builds cmd/dosim into a temporary folder and returns its path.
func buildDosim(ctx context.Context, t *testing.T) string {
	t.Helper()
	dosimBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "dosim-cli-test")
		if err != nil {
			dosimBin.err = err
			return
		}
		dosimBin.dir, dosimBin.path = dir, filepath.Join(dir, "dosim")
		dosimBin.out, dosimBin.err = exec.CommandContext(ctx, "go", "build", "-o", dosimBin.path, "../cmd/dosim").CombinedOutput()
	})
	if dosimBin.err != nil {
		t.Fatalf("go build: %v\n%s", dosimBin.err, dosimBin.out)
	}
	return dosimBin.path
}

// dosimBin is the dosim binary buildDosim builds once for the tests that
// run it (each build links SQLite and, under make test, the race
// runtime); TestMain removes its folder.
var dosimBin struct {
	once      sync.Once
	dir, path string
	out       []byte
	err       error
}

// H2, through a real process: SIGINT and SIGTERM end a sweep with the
// summary of what ran and exit codes 130 and 143.
func TestH2_ExploreSignalsThroughTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds dosim")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a watchdog, not a measure
	defer cancel()
	bin := buildDosim(ctx, t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			js := filepath.Join(t.TempDir(), "cut.json")
			cmd := exec.CommandContext(ctx, bin, "explore", ambiguous, "--seeds", "1000000000000", "--json", js)
			var stdout bytes.Buffer
			cmd.Stdout = &stdout
			stderr, err := cmd.StderrPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			r := bufio.NewReader(stderr)
			line, err := r.ReadString('\n')
			require.NoError(t, err)
			require.Equal(t, "explore: 1000000000000 seeds to run; progress every 10s\n", line)
			require.NoError(t, cmd.Process.Signal(sig))
			rest, _ := r.ReadString(0)
			err = cmd.Wait()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, rest)
			assert.Equal(t, 128+int(sig), exit.ExitCode(), rest)
			assert.Contains(t, stdout.String(), "INTERRUPTED: only the first ")
			assert.Contains(t, rest, "dosim: interrupted: ")
			data, err := os.ReadFile(js)
			require.NoError(t, err)
			assert.Contains(t, string(data), `"complete": false`)
		})
	}
}

// H2: a shard relabelled as the whole sweep ("shards" 0/3 to 0/1, "ran"
// raised to match) merged as every seed run and clean; the fingerprint
// now covers the seed range, the shards and the counts.
func TestH2_ExploreMergeRefusesARelabelledShard(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "s.json")
	code, _, errOut := runCLI(t, "explore", ambiguous, "--seeds", "30", "--shard", "0/3", "--json", f)
	require.Equal(t, exitOK, code, errOut)
	rewrite(t, f, func(m map[string]any) {
		m["shards"] = []any{map[string]any{"index": 0, "count": 1}}
		m["ran"] = 30
	})
	code, out, errOut := runCLI(t, "explore", "merge", f)
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, `"fingerprint" is sha256:`)
	assert.Contains(t, errOut, "the file was edited")
	assert.NotContains(t, out, "clean")
}

// H2: explore merge re-reads the scenario file the shards name, when it
// is there: a file edited since the sweep is refused.
func TestH2_ExploreMergeRechecksTheScenarioFile(t *testing.T) {
	dir := t.TempDir()
	file := copyFile(t, ambiguous, filepath.Join(dir, "ambiguous-delivery.yaml"))
	a, b := shardFile(t, dir, file, "0/2"), shardFile(t, dir, file, "1/2")
	code, out, errOut := runCLI(t, "explore", "merge", a, b)
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "clean: no violation")

	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("# edited after the sweep\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	code, out, errOut = runCLI(t, "explore", "merge", a, b)
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, "the scenario file \""+file+"\" has changed since the sweep")
	assert.Empty(t, out)
}
