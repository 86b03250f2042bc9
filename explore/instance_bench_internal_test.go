package explore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/require"
)

// fieldTally counts in a field (in memory) or in storage: the same class,
// the model keeping its instance or not.
type fieldTally struct {
	st       *object.State
	n        int
	inMemory bool
}

func (f *fieldTally) Methods() object.Methods {
	return object.Methods{"Add": object.Func(func(ctx context.Context) (int, error) {
		if f.inMemory {
			f.n++
			return f.n, nil
		}
		var n int
		if _, err := f.st.Storage().Get(ctx, "n", &n); err != nil {
			return 0, err
		}
		return n + 1, f.st.Storage().Put(ctx, "n", n+1)
	})}
}

// tallyHistory runs calls Adds on one tally, a millisecond apart, and
// returns what the check reads of it.
func tallyHistory(tb testing.TB, calls int, inMemory bool) *runView {
	tb.Helper()
	ctor := func(st *object.State) object.Object { return &fieldTally{st: st, inMemory: inMemory} }
	rt := runtime.New(runtime.WithSeed(1), runtime.WithHistory(), runtime.WithEviction(false))
	tb.Cleanup(func() { _ = rt.Close() })
	ns := rt.Namespace("TALLY", ctor)
	require.NoError(tb, rt.Run(func(ctx context.Context) error {
		for range calls {
			s, err := ns.GetByName("t")
			if err != nil {
				return err
			}
			if _, err := s.Call(ctx, "Add"); err != nil {
				return err
			}
			if err := rt.Sleep(ctx, time.Millisecond); err != nil {
				return err
			}
		}
		return nil
	}))
	return funcView(rt.Calls(), rt.History(), rt.Effects(), map[string]*runtime.Namespace{"TALLY": ns})
}

// BenchmarkCheckInstance checks one object's history of sequential calls
// with a cold model, for a class that keeps its count in storage and the
// same class keeping it in a field: then the model keeps the instance
// (rule C2) and each new step replays the turns the instance ran before
// it. It reports the turns replayed per check.
func BenchmarkCheckInstance(b *testing.B) {
	for _, size := range []int{10, 100, 1000} {
		for _, inMemory := range []bool{false, true} {
			where := "storage"
			if inMemory {
				where = "field"
			}
			b.Run(fmt.Sprintf("calls=%d/%s", size, where), func(b *testing.B) {
				v := tallyHistory(b, size, inMemory)
				for range b.N {
					rep := checkLinear(1, v, newModels(), DefaultMaxAmbiguous, nil, nil, 0)
					if rep.checked != 1 || len(rep.violations) != 0 {
						b.Fatalf("checked %d, violations %v, unchecked %v", rep.checked, rep.violations, rep.unchecked)
					}
				}
			})
		}
	}
}
