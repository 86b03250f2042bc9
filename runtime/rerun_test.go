package runtime_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rules S6 and C6: RerunDuplicates turns the host's refusal of a duplicate
// off for its namespace only. After a lost reply, the retry of the
// unmarked AddOne runs again there (the call recovers, two apples), and is
// refused in a namespace of the same class without the option (the call
// fails with its first error, one apple). A fetch handler, never marked,
// runs again there too.
func TestS6_RerunDuplicatesRunsAnUnmarkedMethodAgainInItsNamespaceOnly(t *testing.T) {
	plan := transport.Plan(
		transport.Rule{Method: "AddOne", Attempt: 1, Fault: transport.LoseResponse},
		transport.Rule{Method: "fetch", Attempt: 1, Fault: transport.LoseResponse},
	)
	rt := newRuntime(t, runtime.WithFaults(plan))
	rerun := rt.Namespace("RERUN", examples.NewInventory, runtime.RerunDuplicates())
	plain := rt.Namespace("PLAIN", examples.NewInventory, nil) // a nil option is ignored
	bucket := rt.Namespace("BUCKET", examples.NewBucket, runtime.RerunDuplicates())

	got := map[string]int{}
	var errs = map[string]error{}
	run(t, rt, func(ctx context.Context) error {
		for _, ns := range []*runtime.Namespace{rerun, plain} {
			_, errs[ns.Name()] = mustStub(t, ns, "shop").Call(ctx, "AddOne", "apple")
			n, err := stub.CallAs[int](ctx, mustStub(t, ns, "shop"), "Get", "apple")
			if err != nil {
				return err
			}
			got[ns.Name()] = n
		}
		req, err := http.NewRequest(http.MethodPut, "http://bucket/a", strings.NewReader("hello"))
		if err != nil {
			return err
		}
		resp, err := mustStub(t, bucket, "b").Fetch(ctx, req)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	})
	assert.NoError(t, errs["RERUN"], "the duplicate ran and answered")
	assert.Equal(t, 2, got["RERUN"], "AddOne ran twice for one request")
	var e *stub.Error
	require.True(t, errors.As(errs["PLAIN"], &e), "PLAIN: %v", errs["PLAIN"])
	assert.True(t, e.Retryable, "the first attempt's error (S6)")
	assert.Equal(t, 1, got["PLAIN"], "without the option the duplicate is refused")

	byNS := map[string][]runtime.CallRecord{}
	for _, c := range rt.Calls() {
		byNS[c.Namespace] = append(byNS[c.Namespace], c)
	}
	assert.Equal(t, 2, byNS["RERUN"][0].Executions())
	assert.Equal(t, transport.OutcomeRecovered, byNS["RERUN"][0].Outcome)
	assert.Equal(t, 1, byNS["PLAIN"][0].Executions())
	assert.True(t, byNS["PLAIN"][0].Attempts[1].Rejected, "refused before user code ran")
	require.Len(t, byNS["BUCKET"], 1)
	assert.Equal(t, 2, byNS["BUCKET"][0].Executions(), "the fetch handler ran again")
}
