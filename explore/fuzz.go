package explore

import (
	"context"
	"crypto/sha256"
	"fmt"

	"github.com/dosim/dosim/transport"
)

// Input is one input of a coverage-guided fuzzer for a function (rule
// U3): the runtime's seed, the decision bytes the run reads for its
// faults and latencies before the seed's own draws (transport.Choices
// says which byte decides what), and the bytes that choose the tops of
// the scheduler's draws (same-instant tie-breaks, backoff jitter, PCT's
// priorities and change points; runtime.WithTieBytes). In a mix sweep
// (the default) the first tie byte picks the input's strategy, and, for
// PCT, the next its depth (Options.inputRun), so the fuzzer steers the
// strategy through its bytes, not only by changing the seed; without tie
// bytes the input runs as its seed does. dosimtest.Fuzz hands Go's native fuzzer (go test
// -fuzz) all three, as the fuzz arguments (uint64, []byte, []byte): it
// mutates each apart from the others, and the edits of either byte string
// are prefix-stable (byte i is decision i).
type Input struct {
	Seed  uint64
	Bytes []byte
	Ties  []byte
}

// inputSource is what an input decides in one run: a fresh Choices (its
// bytes are used up as the run decides) and the tie bytes.
type inputSource struct {
	choices *transport.Choices
	ties    []byte
}

// source is a fresh source of in's decisions for one run.
func (in Input) source() inputSource {
	return inputSource{choices: transport.NewChoices(in.Bytes), ties: in.Ties}
}

// replay is the source of a shrunk replay of in: the latencies src chose,
// by call and attempt, and the same tie bytes, read in turn.
func (in Input) replay(src inputSource) inputSource {
	return inputSource{choices: src.choices.Replay(), ties: in.Ties}
}

// String names the input for a person: its seed and bytes in hex.
func (in Input) String() string {
	s := fmt.Sprintf("seed %d, no decision bytes", in.Seed)
	if len(in.Bytes) > 0 {
		s = fmt.Sprintf("seed %d, %s %x", in.Seed, plural(len(in.Bytes), "decision byte"), in.Bytes)
	}
	if len(in.Ties) > 0 {
		s += fmt.Sprintf(", %s %x", plural(len(in.Ties), "tie byte"), in.Ties)
	}
	return s
}

// CorpusFile is the input as a file of Go's fuzz corpus, in the format
// go test reads from testdata/fuzz/FUZZNAME/ (the fuzz arguments uint64,
// []byte, []byte), and the name go test -fuzz gives such a file: the first 16 hex
// digits of its SHA-256. Saved under that folder, the file replays the
// input as any failing seed replays: go test -run '^FUZZNAME$/^NAME$'.
func (in Input) CorpusFile() (name string, data []byte) {
	data = fmt.Appendf(nil, "go test fuzz v1\nuint64(%d)\n[]byte(%q)\n[]byte(%q)\n", in.Seed, in.Bytes, in.Ties)
	return fmt.Sprintf("%x", sha256.Sum256(data))[:16], data
}

// RunText names the run of in that f describes, for a person, as
// Failing.RunText does for a seed: the input's own run, or the shrunk
// replay (its seed, the shrunk faults as rules, the latencies the input's
// bytes chose, its tie bytes).
func (in Input) RunText(f *Failing) string {
	if f.Run == RunShrunk {
		ties := ""
		if len(in.Ties) > 0 {
			ties = " and its tie bytes"
		}
		return fmt.Sprintf("the shrunk replay (seed %d with %s only, and the latencies the input chose%s)", in.Seed, plural(len(f.Shrunk), "fault"), ties)
	}
	return fmt.Sprintf("the input's own run (%s)", in)
}

// ErrFuzzOptions is wrapped by FuzzOptions's error.
var ErrFuzzOptions = fmt.Errorf("%w for fuzzing", ErrOptions)

// FuzzOptions says what in opts a fuzz input cannot honour: the input's
// bytes decide the faults, so Exhaustive (which places them itself) does
// not apply.
func FuzzOptions(opts Options) error {
	if opts.Exhaustive {
		return fmt.Errorf("%w: Exhaustive places the faults itself; a fuzz input's bytes choose them (leave Exhaustive false)", ErrFuzzOptions)
	}
	return nil
}

// RunInput runs in once and keeps the run: its violations, timeline and
// trace (FuncRun.Trace). It does not shrink.
func (fe *FuncExplorer) RunInput(in Input) *FuncRun {
	r := fe.checkWith(in.Seed, nil, in.source(), checkMode{trace: true}, true)
	f := &Failing{Seed: in.Seed, Violations: r.Violations, Faults: r.Faults, Shrunk: r.Faults, Run: RunSeed}
	return &FuncRun{fe: fe, f: f, r: r}
}

// CheckInput runs in with every check of the function's sweep (see
// NewFunc; Options.CheckDeterminism runs it twice and compares traces) and
// returns what it found: no Violations when it is clean. A failing
// input's faults (those its bytes and seed drew) are shrunk by delta
// debugging, as a failing seed's are, unless Options.NoShrink: the shrunk
// replay runs the input's seed with the shrunk faults as rules, the
// latencies the input chose, by call and attempt, and its tie bytes, read
// in turn (a run with fewer faults makes fewer draws, so a tie byte may
// fall to another draw than in the input's own run). The share of histories
// checked (rule C3) is not judged for one input.
func (fe *FuncExplorer) CheckInput(in Input) *Failing {
	o := fe.opts
	src := in.source()
	r := fe.checkWith(in.Seed, nil, src, checkMode{trace: o.CheckDeterminism}, false)
	if o.CheckDeterminism {
		again := fe.checkWith(in.Seed, nil, in.source(), checkMode{trace: true, skipLinear: true}, false)
		if v, ok := differs(in.Seed, r.trace, again.trace); ok {
			r.Violations = append(r.Violations, v)
		}
	}
	f := &Failing{Seed: in.Seed, Violations: r.Violations, Faults: r.Faults, Shrunk: r.Faults, Run: RunSeed}
	run, _ := o.inputRun(fe.sched, in.Seed, in.Ties)
	run.describe(f, fe.sched)
	if len(r.Violations) == 0 {
		return f
	}
	if o.NoShrink {
		f.Shrink = ShrinkOff
		return f
	}
	shrink(context.Background(), f, o, fe.now, func(rules []transport.Rule, mode checkMode) ([]Violation, bool) {
		got := fe.checkWith(in.Seed, rules, in.replay(src), mode, false)
		return got.Violations, got.timedOut
	})
	if f.Run == RunShrunk {
		f.settle(fe.checkWith(in.Seed, append([]transport.Rule{}, f.Shrunk...), in.replay(src), checkAll, false).Violations)
	}
	return f
}

// RerunInput runs again the run of in that f (from CheckInput) describes
// and keeps it, for its timeline and artifacts: the shrunk replay when
// f.Run is RunShrunk, else the input's own run.
func (fe *FuncExplorer) RerunInput(in Input, f *Failing) *FuncRun {
	src := in.source()
	if f.Run != RunShrunk {
		return &FuncRun{fe: fe, f: f, r: fe.checkWith(in.Seed, nil, src, checkMode{trace: true}, true)}
	}
	fe.checkWith(in.Seed, nil, src, checkMode{skipLinear: true}, false) // what the input chose
	return &FuncRun{fe: fe, f: f, r: fe.checkWith(in.Seed, append([]transport.Rule{}, f.Shrunk...), in.replay(src), checkMode{trace: true}, true)}
}

// Trace is all the run did, as text: what two runs of one input must
// agree on, byte for byte. It is empty for a run kept without it (Rerun).
func (r *FuncRun) Trace() string { return r.r.trace }

// Violations are what the run violated.
func (r *FuncRun) Violations() []Violation { return r.r.Violations }

// Faults are the faults that fired in the run, as rules that replay them.
func (r *FuncRun) Faults() []transport.Rule { return r.r.Faults }
