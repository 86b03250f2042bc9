package explore_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/dosim/dosim/explore"
	"github.com/stretchr/testify/require"
)

// mergeCorpus is where FuzzMergeShards's shard files are kept: made once
// by shardJSON (TestMergeCorpusIsCurrent, DOSIM_CORPUS_UPDATE=1 writes
// them), read by the fuzz target. A fuzz worker that swept them itself
// spent its time in the sweep, under the fuzzer's instrumentation: 20
// executions in 50 s.
var mergeCorpus = map[string]struct {
	shard   explore.Shard
	failing bool
}{
	"shard-0.json":         {explore.Shard{Index: 0, Count: 2}, false},
	"shard-1.json":         {explore.Shard{Index: 1, Count: 2}, false},
	"shard-1-failing.json": {explore.Shard{Index: 1, Count: 2}, true},
}

// maxMergeInput bounds a fuzz input: a shard file of this sweep is 3 KB,
// and a larger input only makes the fuzzer slower, not wiser.
const maxMergeInput = 64 << 10

func readMergeCorpus(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "merge", name))
	require.NoError(t, err, "the merge corpus: DOSIM_CORPUS_UPDATE=1 go test ./explore -run TestMergeCorpusIsCurrent writes it")
	return b
}

// The merge corpus is what this version of dosim writes: a corpus from
// another version would be refused whole by ReadSummary (its fingerprint),
// and the fuzzer would explore only the refusal.
func TestMergeCorpusIsCurrent(t *testing.T) {
	for name, c := range mergeCorpus {
		want := shardJSON(t, c.shard, c.failing)
		if os.Getenv("DOSIM_CORPUS_UPDATE") == "1" {
			require.NoError(t, os.MkdirAll(filepath.Join("testdata", "merge"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join("testdata", "merge", name), want, 0o644))
			continue
		}
		require.Equal(t, string(want), string(readMergeCorpus(t, name)), "%s is stale: DOSIM_CORPUS_UPDATE=1 go test ./explore -run TestMergeCorpusIsCurrent", name)
	}
}

// FuzzMergeShards feeds two shard files to the merge reader: nothing may
// panic, whatever merges must validate again once written, and a merge
// that says clean has every seed of the sweep checked with no violation.
func FuzzMergeShards(f *testing.F) {
	a, b, bad := readMergeCorpus(f, "shard-0.json"), readMergeCorpus(f, "shard-1.json"), readMergeCorpus(f, "shard-1-failing.json")
	f.Add(a, b)
	f.Add(a, bad)
	f.Add(a, a)
	f.Add([]byte(`{}`), b)
	f.Add([]byte(`null`), []byte(`[]`))
	for _, change := range []func(m map[string]any){
		func(m map[string]any) { m["failed"] = 3 },
		func(m map[string]any) { m["ran"] = -5 },
		func(m map[string]any) { m["ran"] = 1 },
		func(m map[string]any) { m["complete"] = false },
		func(m map[string]any) { m["shards"] = []any{map[string]any{"index": 0, "count": 0}} },
		func(m map[string]any) { m["shards"] = []any{map[string]any{"index": 0, "count": -2}} },
		func(m map[string]any) { m["shards"] = []any{map[string]any{"index": 7, "count": 2}} },
		func(m map[string]any) { m["shards"] = []any{map[string]any{"index": 1, "count": 1_000_000_000}} },
		func(m map[string]any) {
			m["shards"] = []any{map[string]any{"index": 0, "count": 2}, map[string]any{"index": 1, "count": 2}}
		},
		func(m map[string]any) { m["scenarioDigest"] = "sha256:" + string(bytes.Repeat([]byte("a"), 64)) },
		func(m map[string]any) { m["total"] = 1 << 62 },
	} {
		f.Add(edit(f, a, change), b)
	}
	f.Fuzz(func(t *testing.T, x, y []byte) {
		if len(x) > maxMergeInput || len(y) > maxMergeInput {
			return
		}
		var parts []*explore.Summary
		for _, data := range [][]byte{x, y} {
			s, err := explore.ReadSummary(bytes.NewReader(data))
			if err != nil {
				continue
			}
			s.Missing()
			parts = append(parts, s)
		}
		if len(parts) == 0 {
			return
		}
		m, err := explore.Merge(parts...)
		if err != nil {
			return
		}
		m.Missing()
		if m.Clean() && (m.Total != 0 || !m.Complete || len(m.Missing()) != 0) {
			t.Fatalf("clean with %d violations, complete %v, missing %v", m.Total, m.Complete, m.Missing())
		}
		var out bytes.Buffer
		if err := m.WriteJSON(&out); err != nil {
			t.Fatal(err)
		}
		if _, err := explore.ReadSummary(&out); err != nil {
			t.Fatalf("a merged summary does not read back: %v", err)
		}
	})
}
