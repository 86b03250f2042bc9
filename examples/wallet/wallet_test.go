package wallet_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/dosim/dosim/dosimtest"
	"github.com/dosim/dosim/examples/wallet"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
)

// classes is the wallet project's registry: the name its scenarios use.
var classes = scenario.WithClasses(map[string]runtime.Constructor{"wallet": wallet.New})

// The scenario of an ambiguous deposit runs on the user's own class and
// meets every expectation in it (rule U1).
func TestU1_WalletScenario(t *testing.T) {
	sc, err := scenario.Load("testdata/wallet.yaml", classes)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sc.Run(scenario.Seed(7))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Passed() {
		t.Fatalf("seed 7: %d expectation(s) failed, the first: %v", len(res.Failures), res.Failures[0])
	}
}

// deposits is the function explored: two deposits and a withdrawal, whose
// replies the faults may lose (errors are expected under faults, so they
// are not the function's failure).
func deposits(newWallet runtime.Constructor) func(ctx context.Context, rt *runtime.Runtime) error {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("WALLET", newWallet)
		alice := wallet.FreshStub(ns, "alice") // a fresh stub per call: a failure breaks a stub (rule L2)
		_, _ = alice.Deposit(ctx, "tx-1", 50)  // errors are expected under faults
		_, _ = alice.Deposit(ctx, "tx-2", 30)
		_, _ = alice.Withdraw(ctx, 20)
		return nil
	}
}

// The wallet explores clean: whatever the link loses, every object's
// history is one a wallet running one call at a time could have given
// (rules U3 and S6: Deposit runs again on a retry, safely, by its key).
func TestU3_WalletUnderFaults(t *testing.T) {
	sum := dosimtest.Func(t, explore.Options{Seeds: 2000}, deposits(wallet.New))
	if !sum.Clean() {
		t.Fatalf("the wallet should explore clean: %d violations", sum.Total)
	}
}

// recorder is a testing.TB that keeps what a test would report, so that a
// test can check the failure the planted bug gives.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(f string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(f, args...))
}
func (r *recorder) Fatalf(f string, args ...any) { r.Errorf(f, args...) }

// The planted bug (Deposit marked Retryable without its key) fails the
// same exploration, with the faults that break it and one go test command
// that replays the seed (rules U3, U4).
func TestU4_LeakyWalletFailsWithAReplayCommand(t *testing.T) {
	t.Setenv("DOSIM_ARTIFACTS", t.TempDir())
	r := &recorder{TB: t}
	sum := dosimtest.Func(r, explore.Options{Seeds: 2000}, deposits(wallet.NewLeaky))
	if sum.Clean() || len(r.failures) == 0 {
		t.Fatal("the leaky wallet explored clean: the explorer missed the planted bug")
	}
	msg := strings.Join(r.failures, "\n")
	seed := sum.FirstFailing.Seed
	replay := fmt.Sprintf("replay: go test github.com/dosim/dosim/examples/wallet -run '^%s$' -count=1 -dosim.seed=%d", t.Name(), seed)
	for _, want := range []string{"linearizability WALLET/alice", "method: Deposit", replay} {
		if !strings.Contains(msg, want) {
			t.Errorf("the failure should mention %q; it reads:\n%s", want, msg)
		}
	}

	// docs/objects.md quotes this failure: every line it shows is printed, in
	// order ("..." stands for the artifacts line, a machine's path).
	readme, err := os.ReadFile("../../docs/objects.md")
	if err != nil {
		t.Fatal(err)
	}
	_, quoted, ok := strings.Cut(string(readme), "<!-- leaky-wallet-failure -->\n```\n")
	if !ok {
		t.Fatal("docs/objects.md: no quoted leaky-wallet failure")
	}
	quoted, _, _ = strings.Cut(quoted, "```")
	got := strings.Split(msg, "\n")
	for _, line := range strings.Split(strings.TrimSpace(quoted), "\n") {
		if line == "..." {
			continue
		}
		i := slices.Index(got, line)
		if i < 0 {
			t.Errorf("docs/objects.md quotes a line the failure does not print (in this order):\n%s\nthe failure:\n%s", line, msg)
			break
		}
		got = got[i+1:]
	}

	// The printed command replays that seed alone, and it fails again.
	t.Setenv("DOSIM_SEED", fmt.Sprint(seed))
	again := &recorder{TB: t}
	one := dosimtest.Func(again, explore.Options{Seeds: 2000}, deposits(wallet.NewLeaky))
	if one.Ran != 1 || one.Clean() || one.FirstFailing == nil || one.FirstFailing.Seed != seed {
		t.Fatalf("replaying seed %d: ran %d seed(s), clean %v", seed, one.Ran, one.Clean())
	}
}

// Concurrent deposits whose replies may be lost still explore clean: a
// replayed transaction id answers what its first run answered, not the
// balance after a deposit made in between, which no order of the calls
// could explain (rules U3, S6).
func TestU3_ConcurrentDepositsUnderFaults(t *testing.T) {
	sum := dosimtest.Func(t, explore.Options{Seeds: 1000}, func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("WALLET", wallet.New)
		g := rt.Group(ctx)
		for _, d := range []struct {
			tx     string
			amount int
		}{{"tx-1", 50}, {"tx-2", 30}} {
			g.Go(func(ctx context.Context) error {
				_, _ = wallet.FreshStub(ns, "alice").Deposit(ctx, d.tx, d.amount) // errors are expected under faults
				return nil
			})
		}
		return g.Wait()
	})
	if !sum.Clean() {
		t.Fatalf("concurrent deposits should explore clean: %d violations", sum.Total)
	}
}
