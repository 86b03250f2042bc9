package explore_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fuzzOpts are rates low enough that a seed's own draws rarely fault (1%
// of attempts each), with latency: what a fuzz input's bytes choose.
// Byte 252 of an attempt's fault picks lose-response: u = 3/256 lies in
// [0.01, 0.02), lose-request's rate then lose-response's.
func fuzzOpts() explore.Options {
	return explore.Options{Seeds: 1, Strategy: runtime.StrategyRandom,
		Rates:   transport.Rates{transport.LoseRequest: 0.01, transport.LoseResponse: 0.01},
		Latency: transport.Latency{P50: time.Millisecond, P99: 20 * time.Millisecond}}
}

// loseFirstReply is an input whose first decision (the fault of call 1's
// first attempt) loses the reply: the counter's retried Add runs twice.
var loseFirstReply = explore.Input{Seed: 1, Bytes: []byte{252}}

// Same input, same trace, byte for byte; another byte, another trace.
func TestFuzz_SameInputSameTrace(t *testing.T) {
	fe, err := explore.NewFunc(fuzzOpts(), counterFunc)
	require.NoError(t, err)
	in := explore.Input{Seed: 3, Bytes: []byte{0, 200, 252, 17, 0, 255, 9}}
	first, second := fe.RunInput(in).Trace(), fe.RunInput(in).Trace()
	require.NotEmpty(t, first)
	assert.Equal(t, first, second)
	other := explore.Input{Seed: 3, Bytes: []byte{0, 201, 252, 17, 0, 255, 9}} // one latency byte differs
	assert.NotEqual(t, first, fe.RunInput(other).Trace())
}

// The tie bytes choose the scheduler's draws: same input, same trace;
// another tie byte, another schedule (here the backoff of the retry the
// lost reply makes, drawn by the stub from the scheduler's source).
func TestFuzz_TieBytesChooseTheSchedule(t *testing.T) {
	fe, err := explore.NewFunc(fuzzOpts(), walletFunc)
	require.NoError(t, err)
	in := explore.Input{Seed: 1, Bytes: []byte{252}, Ties: []byte{9, 200, 3, 77, 0, 0, 255}}
	first := fe.RunInput(in).Trace()
	assert.Equal(t, first, fe.RunInput(in).Trace())
	differ := 0
	for i := range in.Ties {
		other := in
		other.Ties = append([]byte{}, in.Ties...)
		other.Ties[i] ^= 0x80
		if fe.RunInput(other).Trace() != first {
			differ++
		}
	}
	assert.Positive(t, differ, "some tie byte changes the run")
}

// An input with no bytes is its seed's own run, as explore.Func runs it:
// the seed fills in every decision.
func TestFuzz_NoBytesIsTheSeedsOwnRun(t *testing.T) {
	fe, err := explore.NewFunc(fuzzOpts(), walletFunc)
	require.NoError(t, err)
	for seed := uint64(1); seed <= 5; seed++ {
		var viaInput, viaSeed bytes.Buffer
		require.NoError(t, fe.RunInput(explore.Input{Seed: seed}).WriteTimeline(&viaInput))
		require.NoError(t, fe.Rerun(&explore.Failing{Seed: seed, Run: explore.RunSeed}).WriteTimeline(&viaSeed))
		assert.Equal(t, viaSeed.String(), viaInput.String(), "seed %d", seed)
	}
}

// The bytes choose the faults: byte 252 on the first attempt plants the
// lost reply that makes the counter's retried Add count twice, byte 0
// delivers, and the seed's own draws (no bytes) miss the bug.
func TestFuzz_BytesChooseTheFaults(t *testing.T) {
	fe, err := explore.NewFunc(fuzzOpts(), counterFunc)
	require.NoError(t, err)
	run := fe.RunInput(loseFirstReply)
	require.NotEmpty(t, run.Faults())
	assert.Equal(t, transport.Rule{Call: 1, Method: "Add", Attempt: 1, Fault: transport.LoseResponse}, run.Faults()[0])
	require.NotEmpty(t, run.Violations())
	assert.Equal(t, explore.KindLinearizability, run.Violations()[0].Kind)

	assert.Empty(t, fe.RunInput(explore.Input{Seed: 1, Bytes: []byte{0}}).Violations(), "byte 0 delivers")
	assert.Empty(t, fe.RunInput(explore.Input{Seed: 1}).Violations(), "seed 1's own draws miss the bug")
}

// A failing input's faults shrink, by delta debugging, to the one that
// matters, and the shrunk replay (the shrunk faults as rules, the
// latencies the input chose) still fails.
func TestFuzz_AFailingInputShrinks(t *testing.T) {
	fe, err := explore.NewFunc(fuzzOpts(), counterFunc)
	require.NoError(t, err)
	// The bytes go to each attempt's fault, its latency and its reply's
	// latency, in the order the run decides them: lose-response (252) on
	// the first attempt of call 1, then lose-request (253) on some of the
	// attempts that follow.
	in := explore.Input{Seed: 1, Bytes: []byte{252, 40, 0, 90, 253, 7, 0, 3, 253, 100, 0, 0, 253, 60}}
	f := fe.CheckInput(in)
	require.NotEmpty(t, f.Violations)
	require.Greater(t, len(f.Faults), 1, "the input drew several faults: %v", f.Faults)
	assert.Equal(t, explore.ShrinkDone, f.Shrink)
	assert.Equal(t, explore.RunShrunk, f.Run)
	assert.Equal(t, []transport.Rule{{Call: 1, Method: "Add", Attempt: 1, Fault: transport.LoseResponse}}, f.Shrunk)
	assert.Equal(t, explore.KindLinearizability, f.Violations[0].Kind)
	assert.Contains(t, in.RunText(f), "the shrunk replay (seed 1 with 1 fault only")

	// The run the report describes is the shrunk replay, and fails too.
	run := fe.RerunInput(in, f)
	assert.Equal(t, f.Shrunk, run.Faults())
	assert.NotEmpty(t, run.Violations())
}

// A clean input reports nothing; a correct class is clean under inputs
// that fault every attempt the bytes reach.
func TestFuzz_ACorrectClassIsClean(t *testing.T) {
	fe, err := explore.NewFunc(fuzzOpts(), walletFunc)
	require.NoError(t, err)
	for _, b := range [][]byte{nil, {252}, {252, 0, 252, 0, 252, 0}, {253, 255, 252, 128, 251, 254}} {
		f := fe.CheckInput(explore.Input{Seed: 2, Bytes: b})
		assert.Empty(t, f.Violations, "bytes %x", b)
	}
}

// CorpusFile writes the input as go test reads a corpus file, named by
// the first 16 hex digits of its SHA-256, as go test -fuzz names it.
func TestFuzz_CorpusFile(t *testing.T) {
	name, data := loseFirstReply.CorpusFile()
	assert.Equal(t, "go test fuzz v1\nuint64(1)\n[]byte(\"\\xfc\")\n[]byte(\"\")\n", string(data))
	assert.Len(t, name, 16)
	assert.Equal(t, strings.ToLower(name), name)
	assert.Equal(t, "seed 1, 1 decision byte fc", loseFirstReply.String())
	assert.Equal(t, "seed 4, no decision bytes", explore.Input{Seed: 4}.String())
	assert.Equal(t, "seed 4, no decision bytes, 2 tie bytes 00ff", explore.Input{Seed: 4, Ties: []byte{0, 255}}.String())
	_, data = explore.Input{Seed: 4, Bytes: []byte("a"), Ties: []byte{0}}.CorpusFile()
	assert.Equal(t, "go test fuzz v1\nuint64(4)\n[]byte(\"a\")\n[]byte(\"\\x00\")\n", string(data))
}

// C9: under mix (the default), a fuzz input's first tie byte picks its
// strategy and, for PCT, the second its depth; the bytes after them are
// PCT's draws (priorities, change points). So the fuzzer reaches the
// starved caller, which only PCT finds, through its bytes: on a seed
// whose own strategy is not PCT, inputs that pick PCT find it, and the
// same seed without bytes does not.
func TestC9_FuzzBytesPickTheStrategyAndItsDecisions(t *testing.T) {
	fe, err := explore.NewFunc(explore.Options{Seeds: 1, NoLinearizability: true, Rates: noFaults}, turnstileCrowd(false))
	require.NoError(t, err)
	seed := uint64(1)
	for explore.MixPick(seed) == runtime.StrategyPCT {
		seed++
	}
	own := fe.CheckInput(explore.Input{Seed: seed})
	assert.Equal(t, explore.MixPick(seed), own.Strategy, "no tie bytes: the seed's own strategy")
	assert.Empty(t, own.Violations)

	f := fe.CheckInput(explore.Input{Seed: seed, Ties: []byte{255, 1}})
	assert.Equal(t, runtime.StrategyPCT, f.Strategy, "byte 0 picks pct")
	assert.Equal(t, explore.MixMinDepth+1, f.Depth, "byte 1 picks the depth")
	assert.Equal(t, runtime.StrategyRandom, fe.CheckInput(explore.Input{Seed: seed, Ties: []byte{0}}).Strategy, "byte 0 picks random")

	found := 0
	for b := range 64 {
		in := explore.Input{Seed: seed, Ties: []byte{255, 0, byte(b), byte(7 * b)}}
		if len(fe.CheckInput(in).Violations) > 0 {
			found++
		}
	}
	assert.Positive(t, found, "inputs that pick pct reach the starved caller through their bytes")
}
