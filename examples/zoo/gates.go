package zoo

import (
	"context"
	"fmt"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// voteThrice votes three times and checks that the count holds every vote
// the caller was told succeeded.
func voteThrice(method string) Driver {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("POLL", examples.NewTally)
		oks := 0
		for range 3 {
			s, err := ns.GetByName("mayor")
			if err != nil {
				return err
			}
			if _, err := s.Call(ctx, method); err == nil {
				oks++
			}
		}
		n, err := readInt(ctx, ns, "mayor", "Votes")
		if err == nil && n < oks {
			return fmt.Errorf("%d votes were told they counted, the tally holds %d: a reply went before its write was durable", oks, n)
		}
		return nil
	}
}

var unconfirmedReply = Bug{
	Name: "unconfirmed-reply", Kind: "an output-gate AllowUnconfirmed reply",
	Needs:     "one fault: storage-write-fails, which the default rates do not draw (the bug's rates name it)",
	Elsewhere: "examples.Tally VoteFast and Vote; testdata/cli/output-gate-unconfirmed.yaml, testdata/scenarios/output-gate.yaml",
	Buggy:     voteThrice("VoteFast"), Fixed: voteThrice("Vote"),
	Rates: withDefaults(transport.StorageWriteFails, 0.1), FoundBy: FoundByRandom,
}

// withDefaults is the explorer's default rates (each fault but Reset and
// StorageWriteFails at 4%) with f at rate r.
func withDefaults(f transport.Fault, r float64) transport.Rates {
	out := transport.Rates{}
	for _, g := range transport.Faults() {
		if g != transport.Reset && g != transport.StorageWriteFails {
			out[g] = 0.04
		}
	}
	out[f] = r
	return out
}
