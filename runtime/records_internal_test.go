package runtime

import (
	"context"
	"errors"
	"testing"

	"github.com/dosim/dosim/object"
)

// counter is a class of one method, Add, that counts its calls.
type counter struct{ n int }

func (c *counter) Methods() object.Methods {
	return object.Methods{"Add": object.Func(func(context.Context) (int, error) { c.n++; return c.n, nil })}
}

// TestD2_TheCallPastMaxCallsIsRefused: a call's number is an int32 and its
// stamps a uint32 (issue 14: a record of at most 160 bytes), so the call
// past the limit fails with ErrTooManyCalls, is not recorded, and the
// records before it stay as they were; nothing wraps around.
func TestD2_TheCallPastMaxCallsIsRefused(t *testing.T) {
	r := New()
	defer r.Close()
	r.maxCalls = 2
	ns := r.Namespace("COUNTER", func(*object.State) object.Object { return &counter{} })
	var errs []error
	err := r.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("apple")
		if err != nil {
			return err
		}
		for range 3 {
			_, err := s.Call(ctx, "Add")
			errs = append(errs, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("the first two calls failed: %v", errs)
	}
	if !errors.Is(errs[2], ErrTooManyCalls) {
		t.Fatalf("the third call: got %v, want ErrTooManyCalls", errs[2])
	}
	calls := r.Calls()
	if len(calls) != 2 || calls[1].Began >= calls[1].Ended || calls[1].Result != 2 {
		t.Fatalf("records after the refused call: %+v", calls)
	}
}

// TestD2_RecordsAcrossSlabs: the records across several full-size slabs
// are every call's, in order, and two runs of one seed give one trace
// (the slabs carry no state).
func TestD2_RecordsAcrossSlabs(t *testing.T) {
	const calls = 3*slabRecords + 7
	run := func() (*Runtime, string) {
		r := New()
		ns := r.Namespace("COUNTER", func(*object.State) object.Object { return &counter{} })
		err := r.Run(func(ctx context.Context) error {
			s, err := ns.GetByName("c")
			if err != nil {
				return err
			}
			for range calls {
				if _, err := s.Call(ctx, "Add"); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return r, r.Trace()
	}
	r, trace := run()
	defer r.Close()
	got := r.Calls()
	if len(got) != calls {
		t.Fatalf("%d records for %d calls", len(got), calls)
	}
	for i, c := range got {
		if c.Result != i+1 || (i > 0 && c.Began <= got[i-1].Began) {
			t.Fatalf("record %d: result %v, began %d after %d", i, c.Result, c.Began, got[max(i-1, 0)].Began)
		}
	}
	r2, trace2 := run()
	defer r2.Close()
	if trace != trace2 {
		t.Error("two runs of one seed gave different traces")
	}
}
