package dosimtest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/dosim/dosim/dosimtest"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fuzzOpts are rates low enough that a seed's own draws rarely fault (1%
// of attempts each), with latency, and a seed corpus of five seeds: what
// the fuzzer's bytes choose. Byte 252 of an attempt's fault picks
// lose-response (u = 3/256, in [0.01, 0.02)).
func fuzzOpts() explore.Options {
	return explore.Options{Seeds: 5, Strategy: runtime.StrategyRandom, // the bytes choose; the seeds' own draws at fixed rates
		Rates:   transport.Rates{transport.LoseRequest: 0.01, transport.LoseResponse: 0.01},
		Latency: transport.Latency{P50: time.Millisecond, P99: 20 * time.Millisecond}}
}

// plantedEnv, set to 1, makes FuzzCounter fuzz the planted bug (the
// counter's Add, marked Retryable, counts a retry twice) instead of its
// fixed form (the wallet's keyed Deposit): make fuzz fuzzes the fixed
// form, which must stay clean; the crasher test replays a file against
// the planted bug.
const plantedEnv = "DOSIM_FUZZ_PLANTED"

// FuzzCounter is the coverage-guided search of a function that calls one
// object three times: the wallet's keyed deposits, which every input
// leaves clean, or with DOSIM_FUZZ_PLANTED=1 the planted counter, which
// the seed corpus misses and the fuzzer finds (a lost reply of an Add).
func FuzzCounter(f *testing.F) {
	fn := func(ctx context.Context, rt *runtime.Runtime) error {
		s, err := rt.Namespace("WALLET", newWallet).GetByName("alice")
		if err != nil {
			return err
		}
		for _, tx := range []string{"tx-1", "tx-2", "tx-3"} {
			_, _ = s.Call(ctx, "Deposit", tx, 1)
		}
		return nil
	}
	if os.Getenv(plantedEnv) == "1" {
		fn = counterFunc
	}
	dosimtest.Fuzz(f, fuzzOpts(), fn)
}

// The planted bug, from bytes: one byte that loses the first reply is
// enough, and the report is Func's (shrunk faults, the run it describes,
// how to replay it, artifacts), with the input as a corpus file to save
// under testdata/fuzz.
func TestFuzz_InputReportsAsFuncDoes(t *testing.T) {
	t.Setenv("DOSIM_ARTIFACTS", t.TempDir())
	ft := &fakeT{TB: t}
	in := explore.Input{Seed: 1, Bytes: []byte{252}}
	f := dosimtest.Input(ft, fuzzOpts(), counterFunc, in)
	require.NotNil(t, f)
	require.Len(t, ft.errors, 1)
	msg := ft.errors[0]
	assert.Contains(t, msg, "violation(s) in the input (seed 1, 1 decision byte fc)")
	assert.Contains(t, msg, "faults drawn 1, shrunk (shrunk, ")
	assert.Contains(t, msg, "- {call: 1, method: Add, attempt: 1, fault: lose-response}")
	assert.Contains(t, msg, "the shrunk replay (seed 1 with 1 fault only, and the latencies the input chose) violates:\n  seed 1: linearizability COUNTER/c")
	id, _ := in.CorpusFile()
	assert.Contains(t, msg, "replay: go test github.com/dosim/dosim/dosimtest -run '^TestFuzz_InputReportsAsFuncDoes$/^"+id+"$' -count=1 (the input, as testdata/fuzz/TestFuzz_InputReportsAsFuncDoes/"+id+" holds it:\n    go test fuzz v1\n    uint64(1)\n    []byte(\"\\xfc\")\n    []byte(\"\"))")
	assert.Contains(t, msg, "artifacts in ")
	assert.NotContains(t, msg, "timeline of", "only a corpus file's replay prints the timeline")

	ft = &fakeT{TB: t}
	assert.Empty(t, dosimtest.Input(ft, fuzzOpts(), counterFunc, explore.Input{Seed: 1, Bytes: []byte{0}}).Violations)
	assert.Empty(t, ft.errors, "byte 0 delivers: clean")
}

// The seed corpus (no bytes) misses the planted bug: what the fuzzer
// finds, it finds from its bytes.
func TestFuzz_TheSeedCorpusMissesThePlantedBug(t *testing.T) {
	o := fuzzOpts()
	for seed := uint64(1); seed <= uint64(o.Seeds); seed++ {
		ft := &fakeT{TB: t}
		assert.Empty(t, dosimtest.Input(ft, o, counterFunc, explore.Input{Seed: seed}).Violations, "seed %d", seed)
	}
}

// Bad options fail the test with explore's message.
func TestFuzz_InputFailsOnBadOptions(t *testing.T) {
	ft := &fakeT{TB: t}
	assert.Nil(t, dosimtest.Input(ft, explore.Options{Seeds: -1}, counterFunc, explore.Input{}))
	require.Len(t, ft.errors, 1)
	assert.Equal(t, "dosimtest.Input: explore options: Seeds is -1, must be >= 1 (how many seeds to run)", ft.errors[0])

	ft = &fakeT{TB: t}
	assert.Nil(t, dosimtest.Input(ft, explore.Options{Exhaustive: true}, counterFunc, explore.Input{}))
	require.Len(t, ft.errors, 1)
	assert.Equal(t, "dosimtest.Input: explore options for fuzzing: Exhaustive places the faults itself; a fuzz input's bytes choose them (leave Exhaustive false)", ft.errors[0])
}

// A crasher file in testdata/fuzz replays as any failing seed does: go
// test -run '^FuzzCounter$/^ID$' runs it alone and fails with the report
// and the timeline of the run it describes. The test runs this test
// binary again, in a folder that holds the file; against the fixed form
// the same file is clean.
func TestFuzz_ACrasherFileReplays(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary again")
	}
	dir := t.TempDir()
	in := explore.Input{Seed: 2, Bytes: []byte{252, 0}}
	id, data := in.CorpusFile()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "testdata", "fuzz", "FuzzCounter"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "testdata", "fuzz", "FuzzCounter", id), data, 0o644))
	run := func(planted string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^FuzzCounter$/^"+id+"$", "-test.count=1")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), plantedEnv+"="+planted, "DOSIM_ARTIFACTS="+filepath.Join(dir, "artifacts"))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("1")
	require.Error(t, err, "the crasher fails the planted bug:\n%s", out)
	assert.Contains(t, out, "--- FAIL: FuzzCounter/"+id)
	assert.Contains(t, out, "- {call: 1, method: Add, attempt: 1, fault: lose-response}")
	assert.Contains(t, out, "-run '^FuzzCounter$/^"+id+"$' -count=1\n")
	assert.Contains(t, out, "timeline of the shrunk replay (seed 2 with 1 fault only, and the latencies the input chose):")
	assert.Contains(t, out, "Add(1)")

	out, err = run("0")
	require.NoError(t, err, "the fixed form is clean under the same input:\n%s", out)
}
