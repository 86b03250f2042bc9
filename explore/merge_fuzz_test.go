package explore_test

import (
	"bytes"
	"testing"

	"github.com/dosim/dosim/explore"
)

// FuzzMergeShards feeds two shard files to the merge reader: nothing may
// panic, whatever merges must validate again once written, and a merge
// that says clean has every seed of the sweep checked with no violation.
func FuzzMergeShards(f *testing.F) {
	a := shardJSON(f, explore.Shard{Index: 0, Count: 2}, false)
	b := shardJSON(f, explore.Shard{Index: 1, Count: 2}, false)
	bad := shardJSON(f, explore.Shard{Index: 1, Count: 2}, true)
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
