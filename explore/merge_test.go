package explore_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dosim/dosim/explore"
	rt "github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shardJSON sweeps one shard of 60 seeds of ambiguous-delivery (with the
// planted bug when failing) and returns its JSON.
func shardJSON(t testing.TB, sh explore.Shard, failing bool) []byte {
	t.Helper()
	opts := explore.Options{Seeds: 60, Shard: sh}
	if failing {
		opts.Classes = map[string]rt.Constructor{"INVENTORY": newMarkedAddOne}
	}
	sum, err := explore.Run(load(t, "ambiguous-delivery"), opts)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, sum.WriteJSON(&b))
	return b.Bytes()
}

// edit decodes a summary's JSON, lets change alter it and encodes it again.
func edit(t testing.TB, data []byte, change func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	change(m)
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return out
}

// H2: a summary that does not say one consistent thing is refused with
// the field, its value and what is allowed; none of these merged before
// ({} merged to "clean").
func TestH2_MergeRefusesInconsistentSummaries(t *testing.T) {
	clean := shardJSON(t, explore.Shard{Index: 0, Count: 2}, false)
	failing := shardJSON(t, explore.Shard{Index: 0, Count: 2}, true)
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty object", []byte(`{}`), `"scenario" is "": want the scenario's name`},
		{"null", []byte(`null`), `"scenario" is ""`},
		{"two objects", append(append([]byte{}, clean...), clean...), "data after the summary"},
		{"no fingerprint", edit(t, clean, func(m map[string]any) { delete(m, "fingerprint") }), `"fingerprint" is "": a summary records its scenario's fingerprint`},
		{"edited rates", edit(t, clean, func(m map[string]any) { m["rates"] = map[string]any{"lose-request": 0.5} }), "does not match the summary's scenario, digest, rates and options"},
		{"edited digest", edit(t, clean, func(m map[string]any) { m["scenarioDigest"] = "sha256:" + strings.Repeat("0", 64) }), `"fingerprint"`},
		{"bad digest", edit(t, clean, func(m map[string]any) { m["scenarioDigest"] = "md5:1" }), `"scenarioDigest" is "md5:1": want "sha256:" and 64 hex digits`},
		{"failed without violations", edit(t, clean, func(m map[string]any) { m["failed"] = 3 }), `"total" is 0: each of the 3 failed seeds has a violation: want at least 3`},
		{"total without violations", edit(t, clean, func(m map[string]any) { m["failed"], m["total"] = 3, 3 }), `"violations" is 0 long: total is 3: want the first 3`},
		{"claims every shard", edit(t, clean, func(m map[string]any) {
			m["shards"] = []any{map[string]any{"index": 0, "count": 2}, map[string]any{"index": 1, "count": 2}}
		}), `"ran" is 30: a complete summary of these shards ran all their 60 seeds`},
		{"count 0", edit(t, clean, func(m map[string]any) { m["shards"] = []any{map[string]any{"index": 0, "count": 0}} }), `a shard's count is 0: want 1 or more`},
		{"count -2", edit(t, clean, func(m map[string]any) { m["shards"] = []any{map[string]any{"index": 0, "count": -2}} }), `a shard's count is -2: want 1 or more`},
		{"index beyond count", edit(t, clean, func(m map[string]any) { m["shards"] = []any{map[string]any{"index": 5, "count": 2}} }), `a shard's index is 5: want 0 to 1`},
		{"no shards", edit(t, clean, func(m map[string]any) { m["shards"] = []any{} }), `"shards" is empty`},
		{"two splits", edit(t, clean, func(m map[string]any) {
			m["shards"] = []any{map[string]any{"index": 0, "count": 2}, map[string]any{"index": 1, "count": 4}}
		}), "shards of a 2-way and a 4-way split: want one split"},
		{"ran -5", edit(t, clean, func(m map[string]any) { m["ran"] = -5 }), `"ran" is -5: the shards hold 30 seeds: want 0 to 30`},
		{"ran below the shard's seeds", edit(t, clean, func(m map[string]any) { m["ran"] = 10 }), `"ran" is 10: a complete summary of these shards ran all their 30 seeds`},
		{"ran above the shard's seeds", edit(t, clean, func(m map[string]any) { m["ran"], m["complete"] = 31, false }), `"ran" is 31: the shards hold 30 seeds: want 0 to 30`},
		{"seeds 0", edit(t, clean, func(m map[string]any) { m["seeds"] = 0 }), `"seeds" is 0: want 1 or more`},
		{"seeds overflow", edit(t, clean, func(m map[string]any) { m["first"] = uint64(math.MaxUint64 - 5); m["seeds"] = 60 }), `"first" is 18446744073709551610: the last seed, first+seeds-1`},
		{"unknown field", edit(t, clean, func(m map[string]any) { m["extra"] = 1 }), `unknown field "extra"`},
		{"bad max ambiguous", edit(t, clean, func(m map[string]any) { m["maxAmbiguous"] = 0 }), `"maxAmbiguous" is 0: want 1 to 20`},
		{"violation outside the shard", edit(t, failing, func(m map[string]any) {
			m["violations"].([]any)[0].(map[string]any)["seed"] = 2
		}), "that seed is in shard 1/2, which the summary does not cover"},
		{"violation outside the seeds", edit(t, failing, func(m map[string]any) {
			m["violations"].([]any)[0].(map[string]any)["seed"] = 0
		}), "want a seed from 1 to 60"},
		{"unknown kind", edit(t, failing, func(m map[string]any) {
			m["violations"].([]any)[0].(map[string]any)["kind"] = "meh"
		}), `"violations[0].kind" is "meh": allowed are invariant, expectation, linearizability, interleaving, error`},
		{"failing without its first seed", edit(t, failing, func(m map[string]any) { delete(m, "firstFailing") }), `"firstFailing" is missing`},
		{"failed too few", edit(t, failing, func(m map[string]any) { m["failed"] = 1 }), `"failed" is 1: the violations`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := explore.ReadSummary(bytes.NewReader(tc.data))
			require.ErrorIs(t, err, explore.ErrMerge)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	for _, good := range [][]byte{clean, failing} {
		_, err := explore.ReadSummary(bytes.NewReader(good))
		assert.NoError(t, err)
	}
}

// H2: shards merge only with shards of the same sweep: the same scenario
// file (its bytes), options and one split, each shard once.
func TestH2_MergeRefusesShardsOfAnotherSweep(t *testing.T) {
	read := func(data []byte) *explore.Summary {
		s, err := explore.ReadSummary(bytes.NewReader(data))
		require.NoError(t, err)
		return s
	}
	a := read(shardJSON(t, explore.Shard{Index: 0, Count: 2}, false))
	b := read(shardJSON(t, explore.Shard{Index: 1, Count: 2}, false))
	m := mustMerge(t, a, b)
	assert.True(t, m.Clean())

	// The same name, another file: one comment more.
	src, err := os.ReadFile("../testdata/scenarios/ambiguous-delivery.yaml")
	require.NoError(t, err)
	other, err := scenario.Parse("ambiguous-delivery.yaml", append(src, "# edited\n"...), builtIns)
	require.NoError(t, err)
	require.Equal(t, a.Scenario, other.Name)
	sum, err := explore.Run(other, explore.Options{Seeds: 60, Shard: explore.Shard{Index: 1, Count: 2}})
	require.NoError(t, err)
	_, err = explore.Merge(a, sum)
	require.ErrorIs(t, err, explore.ErrMerge)
	assert.Contains(t, err.Error(), "the scenario file's digest (its bytes differ)")

	// Another option that changes results.
	sum, err = explore.Run(load(t, "ambiguous-delivery"), explore.Options{Seeds: 60, MaxAmbiguous: 3, Shard: explore.Shard{Index: 1, Count: 2}})
	require.NoError(t, err)
	_, err = explore.Merge(a, sum)
	assert.ErrorContains(t, err, "maxAmbiguous 3, not 10")

	// A shard twice, and a shard of another split.
	_, err = explore.Merge(a, b, a)
	assert.ErrorContains(t, err, "shard 0/2 appears twice")
	c := read(shardJSON(t, explore.Shard{Index: 1, Count: 3}, false))
	_, err = explore.Merge(a, c)
	assert.ErrorContains(t, err, "has shard 1/3 of a 3-way split")
	whole := mustMerge(t, a, b)
	_, err = explore.Merge(whole, b)
	assert.ErrorContains(t, err, "shard 1/2 appears twice")
}

// H2: Missing reports ranges, so a split into 10^9 shards (which ran out
// of memory listing them) costs nothing; a merge of an interrupted shard
// is incomplete and never clean.
func TestH2_MergeMissingIsRanges(t *testing.T) {
	s := &explore.Summary{Shards: []explore.Shard{{Index: 5, Count: 1_000_000_000}, {Index: 7, Count: 1_000_000_000}}}
	assert.Equal(t, []explore.ShardRange{
		{From: 0, To: 4, Count: 1_000_000_000},
		{From: 6, To: 6, Count: 1_000_000_000},
		{From: 8, To: 999_999_999, Count: 1_000_000_000},
	}, s.Missing())
	assert.Equal(t, "8-999999999/1000000000", s.Missing()[2].String())
	assert.Equal(t, "6/1000000000", s.Missing()[1].String())

	cut := explore.Reseal(edit(t, shardJSON(t, explore.Shard{Index: 0, Count: 1}, false), func(m map[string]any) { m["complete"], m["ran"] = false, 7 }))
	part, err := explore.ReadSummary(bytes.NewReader(cut))
	require.NoError(t, err)
	m := mustMerge(t, part)
	assert.Empty(t, m.Missing())
	assert.False(t, m.Complete)
	assert.False(t, m.Whole())
	assert.False(t, m.Clean(), "an interrupted shard is never clean")
}

// H2: the fingerprint covers the seed range, the shards and every count,
// so an edit that leaves a summary consistent is refused: shard 0/2
// relabelled 0/1 with "ran" raised to the whole sweep's merged as every
// seed run and clean.
func TestH2_MergeRefusesARelabelledShard(t *testing.T) {
	clean := shardJSON(t, explore.Shard{Index: 0, Count: 2}, false)
	failing := shardJSON(t, explore.Shard{Index: 0, Count: 2}, true)
	for name, data := range map[string][]byte{
		"relabelled": edit(t, clean, func(m map[string]any) {
			m["shards"] = []any{map[string]any{"index": 0, "count": 1}}
			m["ran"] = 60
		}),
		"seed range moved": edit(t, clean, func(m map[string]any) { m["first"] = 1000 }),
		"more histories":   edit(t, clean, func(m map[string]any) { m["histories"] = m["histories"].(float64) + 1 }),
		"paths":            edit(t, clean, func(m map[string]any) { m["paths"] = map[string]any{} }),
		"fired":            edit(t, clean, func(m map[string]any) { delete(m, "fired") }),
		"horizon":          edit(t, clean, func(m map[string]any) { m["horizon"] = 1 }),
		"violation text": edit(t, failing, func(m map[string]any) {
			m["violations"].([]any)[0].(map[string]any)["message"] = "nothing to see"
		}),
		"violations dropped": edit(t, failing, func(m map[string]any) {
			m["failed"], m["total"], m["violations"] = 0, 0, []any{}
			delete(m, "firstFailing")
		}),
	} {
		_, err := explore.ReadSummary(bytes.NewReader(data))
		require.ErrorIs(t, err, explore.ErrMerge, name)
		assert.ErrorContains(t, err, `"fingerprint" is sha256:`, name)
		assert.ErrorContains(t, err, "the file was edited, is corrupt or was written by another version", name)
	}
	// Re-sealed (as a summary really of those fields would be), it reads.
	relabelled := explore.Reseal(edit(t, clean, func(m map[string]any) { m["shards"] = []any{map[string]any{"index": 1, "count": 2}} }))
	_, err := explore.ReadSummary(bytes.NewReader(relabelled))
	assert.NoError(t, err)
}

// H2: a merge re-checks the scenario file a summary names, when it is
// there: shards of a file changed since describe what it no longer says.
func TestH2_MergeRechecksTheScenarioFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ambiguous-delivery.yaml")
	src, err := os.ReadFile("../testdata/scenarios/ambiguous-delivery.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, src, 0o644))
	sc, err := scenario.Load(file, builtIns)
	require.NoError(t, err)
	sum, err := explore.Run(sc, explore.Options{Seeds: 4})
	require.NoError(t, err)
	require.NoError(t, sum.CheckScenarioFile())

	require.NoError(t, os.WriteFile(file, append(src, "# edited\n"...), 0o644))
	err = sum.CheckScenarioFile()
	require.ErrorIs(t, err, explore.ErrMerge)
	assert.ErrorContains(t, err, "has changed since the sweep (its digest is sha256:")

	require.NoError(t, os.Remove(file))
	assert.NoError(t, sum.CheckScenarioFile(), "not there: merged elsewhere, not checked")
	require.NoError(t, os.Mkdir(file, 0o755))
	assert.ErrorContains(t, sum.CheckScenarioFile(), "is not a regular file")
}

// H2 (issue 36): a mismatched fingerprint's error does not print the value
// that would match: pasted into the edited file, it made the edit pass
// (a failing shard with its violations deleted merged "clean").
func TestH2_AMismatchedFingerprintIsNotPrinted(t *testing.T) {
	failing := shardJSON(t, explore.Shard{Index: 0, Count: 2}, true)
	hidden := edit(t, failing, func(m map[string]any) {
		m["violations"], m["failed"], m["total"] = []any{}, 0, 0
		delete(m, "firstFailing")
	})
	_, err := explore.ReadSummary(bytes.NewReader(hidden))
	require.ErrorIs(t, err, explore.ErrMerge)
	assert.Contains(t, err.Error(), `"fingerprint"`)
	var m map[string]any
	require.NoError(t, json.Unmarshal(hidden, &m))
	for _, s := range regexp.MustCompile(`sha256:[0-9a-f]{64}`).FindAllString(err.Error(), -1) {
		assert.Equal(t, m["fingerprint"], s, "the error prints only the file's own fingerprint")
		pasted := edit(t, hidden, func(m map[string]any) { m["fingerprint"] = s })
		_, err := explore.ReadSummary(bytes.NewReader(pasted))
		assert.Error(t, err, "a value pasted from the error must not make the edit pass")
	}
}
