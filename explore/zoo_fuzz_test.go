package explore_test

import (
	"os"
	"testing"

	"github.com/dosim/dosim/dosimtest"
	"github.com/dosim/dosim/examples/zoo"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ladderPlantedEnv, set to 1, makes FuzzFallbackLadder fuzz the zoo's
// planted fallback ladder instead of its fixed form: make fuzz fuzzes the
// fixed form, which must stay clean (as dosimtest's FuzzCounter does).
const ladderPlantedEnv = "DOSIM_FUZZ_PLANTED"

// ladderFuzzOptions are the options of the fallback ladder's fuzz
// target: the bug's quiet rates (1% lose-request, 1% lose-response), no
// latency, so that decision byte i is the fault of attempt i (a latency
// would take a byte of its own between them), and a seed corpus of five
// seeds without bytes.
func ladderFuzzOptions(b zoo.Bug) explore.Options {
	return explore.Options{Seeds: 5, Rates: b.Rates, NoLatency: true, Strategy: runtime.StrategyRandom}
}

// ladder is the zoo's fallback-ladder bug.
func ladder(tb testing.TB) zoo.Bug {
	b, ok := zoo.Lookup("fallback-ladder")
	require.True(tb, ok)
	return b
}

// FuzzFallbackLadder is the coverage-guided search of the zoo's fallback
// ladder (go test -fuzz FuzzFallbackLadder ./explore): its fixed form,
// which every input leaves clean, or with DOSIM_FUZZ_PLANTED=1 the
// planted bug, which the seed corpus misses and a fuzzer reaches rung by
// rung (see TestZoo_FuzzFindsTheFallbackLadder).
func FuzzFallbackLadder(f *testing.F) {
	b := ladder(f)
	fn := b.Fixed
	if os.Getenv(ladderPlantedEnv) == "1" {
		fn = b.Buggy
	}
	dosimtest.Fuzz(f, ladderFuzzOptions(b), fn)
}

// TestZoo_FuzzFindsTheFallbackLadder: the fallback ladder is the zoo's
// bug for coverage-guided search. Go's fuzzer is not deterministic, so
// the test does not run it; it checks what makes the bug the fuzzer's:
// (1) random fault draws alone miss it within 10,000 seeds (each seed
// would have to fail four attempts in a row at 2%: 1.6e-7 a seed);
// (2) a short input fails it, and that input is where coverage leads, a
// byte at a time: the seed corpus's inputs charge at rung 1; an input
// whose byte 0 is 251 to 255 (5 values in 256: a fault at the rates of
// 1% + 1%) fails rung 1 and runs rung 2's code, new coverage the fuzzer
// keeps in its corpus; from it one byte more, byte 1, reaches rung 3,
// then byte 2 rung 4, then byte 3 the outbox, each a new block of the
// driver, each kept; and the outbox reached, an edit of any of the four
// bytes to 251 or 252 (a lost response: the rung charged) is the bug.
// (3) The seed corpus misses it. The failure shrinks to the four faults
// and replays from the input.
func TestZoo_FuzzFindsTheFallbackLadder(t *testing.T) {
	b := ladder(t)
	assert.Equal(t, zoo.FoundByFuzz, b.FoundBy)
	o := ladderFuzzOptions(b)

	t.Run("random-alone-misses", func(t *testing.T) { randomAloneMisses(t, b) })

	fe, err := explore.NewFunc(o, b.Buggy)
	require.NoError(t, err)
	t.Run("the-seed-corpus-misses", func(t *testing.T) {
		for seed := o.First; seed < o.First+uint64(o.Seeds); seed++ {
			assert.Empty(t, fe.CheckInput(explore.Input{Seed: seed}).Violations, "seed %d", seed)
		}
	})

	t.Run("coverage-steps", func(t *testing.T) {
		// Rung by rung, as the fuzzer's corpus grows: three lost requests
		// reach the outbox and stay clean (the outbox's own key charged
		// once); a lost response on any rung is the bug.
		for _, clean := range [][]byte{{255}, {255, 255}, {255, 255, 255}, {255, 255, 255, 255}, {252, 255, 255, 0}} {
			assert.Empty(t, fe.CheckInput(explore.Input{Seed: 1, Bytes: clean}).Violations, "bytes %x", clean)
		}
		for _, bug := range [][]byte{{252, 255, 255, 255}, {255, 255, 255, 252}, {251, 251, 251, 251}} {
			assert.NotEmpty(t, fe.CheckInput(explore.Input{Seed: 1, Bytes: bug}).Violations, "bytes %x", bug)
		}
	})

	t.Run("a-crafted-input-fails-shrinks-and-replays", func(t *testing.T) {
		in := explore.Input{Seed: 1, Bytes: []byte{255, 255, 255, 252}}
		f := fe.CheckInput(in)
		require.NotEmpty(t, f.Violations)
		assert.Contains(t, f.Violations[0].Message, "order-1 was charged 20, more than its 10")
		assert.Equal(t, explore.ShrinkDone, f.Shrink)
		assert.Len(t, f.Shrunk, zoo.LadderRungs, "every rung's fault is needed")
		assert.Equal(t, explore.RunShrunk, f.Run)
		again := fe.RunInput(in)
		assert.Equal(t, f.Faults, again.Faults(), "the input replays its faults")
		require.NotEmpty(t, again.Violations())
		assert.Equal(t, f.Violations[0].Message, again.Violations()[0].Message)

		fixed, err := explore.NewFunc(o, b.Fixed)
		require.NoError(t, err)
		assert.Empty(t, fixed.CheckInput(in).Violations, "the fixed form charges once")
	})
}
