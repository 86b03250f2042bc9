// Package dosimtest holds dosim's go test entry points, beside the
// libraries they drive as net/http/httptest sits beside net/http and
// zaptest beside zap: Func explores a Go function's fault space over many
// seeds, Fuzz hands the same search to Go's coverage-guided fuzzer (go
// test -fuzz), whose input bytes choose the faults and latencies, Input
// checks one such input, Scenario explores a scenario's fault space, and
// Verify checks that a method marked object.Retryable is idempotent. Each
// fails the test it is given with what it found, the seed (or input) and
// the command that replays it, and writes its artifacts to a folder that
// outlives the test.
//
//	func TestWalletUnderFaults(t *testing.T) {
//		sum := dosimtest.Func(t, explore.Options{Seeds: 2000}, func(ctx context.Context, rt *runtime.Runtime) error { ... })
//		...
//	}
//
// Packages explore and verify are the plain libraries underneath (the
// dosim command links them and no testing code); package runtimetest is
// the light harness of a single runtime (New, Run, Report), which links
// neither. Both helper packages read the same flags.
//
// # Flags and environment
//
// Pass them after the package, as go test passes them to the test binary:
//
//	go test ./shop -run TestShop -dosim.seed=42 -dosim.artifacts=out
//
// The flags, each with the environment variable it falls back on:
//
//   - -dosim.seed=N (or DOSIM_SEED=N): Func runs seed N alone and prints
//     its timeline; Verify runs with seed N (default 1); runtimetest.New
//     seeds its runtime with it. Scenario ignores it: its replay is a
//     dosim explore command.
//
//   - -dosim.artifacts=DIR (or DOSIM_ARTIFACTS=DIR): where failure
//     artifacts go, a relative DIR being relative to the package's folder
//     (where go test runs the test). By default they go to
//     dosim-artifacts/PACKAGE under the system's temporary folder
//     (os.TempDir), one folder per test and seed, TEST-seed-N. They are not
//     removed when the test ends, so the printed path can be opened
//     afterwards; a later run of the same test and seed overwrites them.
//
//   - -dosim.faults=SET (or DOSIM_FAULTS=SET), with -dosim.seed: Func runs
//     that seed once with exactly the faults SET names,
//     CALL:ATTEMPT:METHOD=FAULT,... or none, and prints its timeline. It is
//     how the failure of an exhaustive search (Options.Exhaustive), a
//     placement of faults rather than a seed's draws, replays: its report
//     prints the command with both flags.
//
// -dosim.seed and -dosim.artifacts are defined once, by the internal
// package both helpers share, so every test binary that links either has
// them; -dosim.faults, which only Func reads, is this package's.
package dosimtest
