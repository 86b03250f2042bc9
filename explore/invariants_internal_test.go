package explore

import (
	"testing"
	"time"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// L2: the explorer flags a record with outcome broken-stub that has a
// delivered attempt (no call reaches the object through a broken stub),
// and accepts one with none delivered, or none at all.
func TestL2_InvariantNoCallThroughABrokenStub(t *testing.T) {
	check := func(atts ...runtime.AttemptRecord) []Violation {
		c := runtime.CallRecord{Namespace: "N", Object: "o", Method: "M", Subrequests: 1,
			Outcome: transport.OutcomeBrokenStub, Attempts: atts}
		return recordInvariants(1, c, false, 4, 10*time.Second)
	}
	if v := check(); len(v) != 0 {
		t.Fatalf("no attempt: want no violation, got %v", v)
	}
	if v := check(runtime.AttemptRecord{N: 1}); len(v) != 0 {
		t.Fatalf("an attempt not delivered: want no violation, got %v", v)
	}
	v := check(runtime.AttemptRecord{N: 1, Delivered: true})
	if len(v) != 1 || v[0].Rule != "L2" {
		t.Fatalf("a delivered attempt: want one L2 violation, got %v", v)
	}
}
