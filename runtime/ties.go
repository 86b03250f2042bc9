package runtime

import "math/rand/v2"

// WithTieBytes makes a fuzzer's bytes choose the kernel's seeded draws:
// the tie-break of each event pushed on the scheduler's heap (which of
// the tasks due at one virtual instant runs first) and the backoff jitter
// of each retry (the stub's delay), in the order the run draws them. Draw
// i takes byte i as its top eight bits, the rest from the seed's source,
// which advances as it would without the bytes; once the bytes run out,
// every draw is the seed's own, so no bytes (or nil) is the seed's run.
// Byte edits are prefix-stable: an edit of byte i changes draw i and what
// follows from it. The other seeded draws (request identities, the
// object code's own random numbers) stay the seed's.
func WithTieBytes(b []byte) Option {
	return optionFunc(func(r *Runtime) { r.ties = append([]byte(nil), b...) })
}

// tieSource is the kernel's source under WithTieBytes: the runtime's PCG,
// its top byte replaced by the next of the bytes while they last.
type tieSource struct {
	r    *Runtime
	next int
}

func (s *tieSource) Uint64() uint64 {
	v := s.r.pcg.Uint64()
	if s.next < len(s.r.ties) {
		v = uint64(s.r.ties[s.next])<<56 | v>>8
		s.next++
	}
	return v
}

// kernelRand is the source the kernel draws its tie-breaks and the stubs
// their jitter from: the runtime's rng, unless WithTieBytes gave bytes.
func (r *Runtime) kernelRand() *rand.Rand {
	if len(r.ties) == 0 {
		return r.rng
	}
	return rand.New(&tieSource{r: r})
}
